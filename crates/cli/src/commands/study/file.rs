//! The study file (TOML): `[study]`, `[vars]`, `[configs.NAME]` and
//! `[[question]]` with its `[[question.line]]`s, read strictly (an unknown
//! key is refused with where it was), variables resolved (`${name}` in any
//! word) and scaled (`--scale X` on the vars `[study.scale]` names).

use crate::error::CliError;
use serde::Deserialize;
use std::collections::BTreeMap;
use storbench_model::study::{Ask, ChartKind, Metric};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Raw {
    study: Header,
    #[serde(default)]
    vars: toml::Table,
    /// Kept as a table: its order is the configurations' order (the first
    /// is the one the others are compared with).
    #[serde(default)]
    configs: toml::Table,
    #[serde(default)]
    question: Vec<Question>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Header {
    title: String,
    #[serde(default)]
    about: String,
    #[serde(default = "one")]
    repeat: u32,
    /// The vars `--scale` multiplies, each with its kind: time, size or count.
    #[serde(default)]
    scale: BTreeMap<String, ScaleKind>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ScaleKind {
    Time,
    Size,
    Count,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    label: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    vars: toml::Table,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub id: String,
    pub title: String,
    pub ask: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub sweep: Vec<String>,
    pub chart: Option<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
    pub configs: Option<Vec<String>>,
    pub repeat: Option<u32>,
    /// Seconds one step takes, when the estimate from its words is wrong.
    pub estimate: Option<f64>,
    /// A compare question's question.
    pub of: Option<String>,
    #[serde(default)]
    pub line: Vec<Line>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub name: String,
    #[serde(default)]
    pub args: Vec<String>,
}

/// A configuration with its words and variables resolved.
#[derive(Debug, Clone)]
pub struct Config {
    pub key: String,
    pub label: String,
    pub args: Vec<String>,
    pub vars: BTreeMap<String, String>,
}

/// A question checked: its ask, chart and metrics known, its configurations
/// and compared question existing.
#[derive(Debug, Clone)]
pub struct Checked {
    pub raw: Question,
    pub ask: Ask,
    pub chart: ChartKind,
    pub metrics: Vec<Metric>,
    pub configs: Vec<String>,
    pub repeat: u32,
}

/// A study file read and checked; variables not yet substituted.
#[derive(Debug)]
pub struct StudyFile {
    pub title: String,
    pub about: String,
    /// The file's variables with `--set` and `--scale` applied.
    pub vars: BTreeMap<String, String>,
    /// `[vars]` as written.
    defaults: BTreeMap<String, String>,
    /// `--set`: over the file's and every configuration's variables.
    pub set: BTreeMap<String, String>,
    /// The vars `--scale` multiplies, and by what.
    scale: Option<(BTreeMap<String, ScaleKind>, f64)>,
    pub configs: Vec<Config>,
    pub questions: Vec<Checked>,
}

impl StudyFile {
    /// A configuration's variables: the file's, the configuration's own over
    /// them, `--set` over both; then `--scale` on those it names.
    pub fn vars_for(&self, c: &Config) -> Result<BTreeMap<String, String>, String> {
        let vars = self.merged(&c.vars)?;
        match vars.iter().find(|(_, v)| v.is_empty()) {
            Some((k, _)) => Err(format!("var {k} has no value: give it with --set {k}=VALUE")),
            None => Ok(vars),
        }
    }

    fn merged(&self, config: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, String> {
        let mut vars = self.defaults.clone();
        vars.extend(config.clone());
        vars.extend(self.set.clone());
        if let Some((names, x)) = &self.scale {
            for (name, kind) in names {
                let v = &vars[name];
                if !v.is_empty() {
                    let s = scaled(v, *kind, *x).map_err(|e| format!("var {name} = '{v}': {e}"))?;
                    vars.insert(name.clone(), s);
                }
            }
        }
        Ok(vars)
    }
}

/// The configuration a study without any runs on.
pub const DEFAULT_CONFIG: &str = "default";
/// The line a question without any has.
pub const DEFAULT_LINE: &str = "all";

pub fn parse(text: &str, set: &[String], scale: Option<f64>) -> Result<StudyFile, String> {
    let raw: Raw = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
    let defaults = scalars(&raw.vars, "[vars]")?;
    let mut given = BTreeMap::new();
    for s in set {
        let (k, v) = s.split_once('=').ok_or_else(|| format!("--set {s}: give NAME=VALUE"))?;
        check_var_name(k)?;
        given.insert(k.to_string(), v.to_string());
    }
    if let Some(name) = raw.study.scale.keys().find(|n| !defaults.contains_key(*n)) {
        return Err(format!("[study] scale names {name}, which [vars] does not define"));
    }
    let scale = scale.map(|x| (raw.study.scale.clone(), x));
    let configs = configs(&raw.configs)?;
    if raw.study.repeat == 0 {
        return Err("[study] repeat = 0: give 1 or more".into());
    }
    if raw.question.is_empty() {
        return Err("the study asks no question: add a [[question]] (see `storbench study --help`)".into());
    }
    let mut questions: Vec<Checked> = Vec::new();
    for q in &raw.question {
        let c = check_question(q, &configs, &questions, raw.study.repeat).map_err(|e| format!("question {}: {e}", q.id))?;
        questions.push(c);
    }
    let mut file = StudyFile {
        title: raw.study.title,
        about: raw.study.about,
        vars: BTreeMap::new(),
        defaults,
        set: given,
        scale,
        configs,
        questions,
    };
    // The file's variables as a study without configurations would use them
    // (checked again with each configuration's own in `vars_for`).
    file.vars = file.merged(&BTreeMap::new())?;
    Ok(file)
}

/// toml's messages span lines (the source excerpt): one line, as every error.
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('|') && !l.starts_with('^')).collect::<Vec<_>>().join(" ")
}

/// Secrets go through the environment, never a study's variables: the
/// index and the report keep every variable.
fn check_var_name(k: &str) -> Result<(), String> {
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!("var '{k}': a name is letters, digits, '_' and '-'"));
    }
    let lower = k.to_ascii_lowercase();
    if ["secret", "password", "token", "key"].iter().any(|s| lower.contains(s)) && !lower.contains("keys") {
        return Err(format!(
            "var {k} looks like a secret: a study keeps its variables in study.json and its report; give secrets through the environment (AWS_SECRET_ACCESS_KEY, ST_KEY, OS_PASSWORD, CEPH_KEYRING...)"
        ));
    }
    Ok(())
}

fn scalars(t: &toml::Table, what: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in t {
        check_var_name(k)?;
        let s = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => (*b as u8).to_string(),
            _ => return Err(format!("{what} {k}: give a string or a number")),
        };
        out.insert(k.clone(), s);
    }
    Ok(out)
}

fn configs(t: &toml::Table) -> Result<Vec<Config>, String> {
    if t.is_empty() {
        return Ok(vec![Config { key: DEFAULT_CONFIG.into(), label: DEFAULT_CONFIG.into(), args: Vec::new(), vars: BTreeMap::new() }]);
    }
    let mut out = Vec::new();
    for (key, v) in t {
        check_id(key).map_err(|e| format!("[configs.{key}]: {e}"))?;
        let raw: RawConfig = v.clone().try_into().map_err(|e: toml::de::Error| format!("[configs.{key}]: {}", one_line(&e.to_string())))?;
        let vars = scalars(&raw.vars, &format!("[configs.{key}] vars"))?;
        out.push(Config { key: key.clone(), label: raw.label.unwrap_or_else(|| key.clone()), args: raw.args, vars });
    }
    Ok(out)
}

/// Ids and names become directory names.
pub fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c == '.')
        && !id.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(format!("'{id}': a name is 1 to 64 of a-z, 0-9, '-', '_', '.' (it names a directory)"))
    }
}

fn check_question(q: &Question, configs: &[Config], before: &[Checked], repeat: u32) -> Result<Checked, String> {
    check_id(&q.id)?;
    if before.iter().any(|b| b.raw.id == q.id) {
        return Err("asked twice: give each question its own id".into());
    }
    let ask = pick(&q.ask, &Ask::NAMES, "ask").map(ask_of)?;
    let chart = match &q.chart {
        Some(c) => chart_of(pick(c, &ChartKind::NAMES, "chart")?),
        None => default_chart(ask),
    };
    let metrics = if q.metrics.is_empty() {
        vec![if chart == ChartKind::IopsLatency { Metric::P99 } else { Metric::Iops }]
    } else {
        q.metrics.iter().map(|m| pick(m, &Metric::NAMES, "metric").map(metric_of)).collect::<Result<_, _>>()?
    };
    let chosen: Vec<String> = match &q.configs {
        Some(list) => list.clone(),
        None => configs.iter().map(|c| c.key.clone()).collect(),
    };
    if let Some(c) = chosen.iter().find(|c| !configs.iter().any(|k| &k.key == *c)) {
        return Err(format!("configs names {c}: no such [configs.{c}]"));
    }
    if chosen.is_empty() {
        return Err("configs = []: give at least one configuration".into());
    }
    let mut names: Vec<&str> = Vec::new();
    for l in &q.line {
        check_id(&l.name).map_err(|e| format!("line {e}"))?;
        if names.contains(&l.name.as_str()) {
            return Err(format!("line {} given twice", l.name));
        }
        names.push(&l.name);
    }
    check_ask(q, ask, chart, before)?;
    Ok(Checked { raw: q.clone(), ask, chart, metrics, configs: chosen, repeat: q.repeat.unwrap_or(repeat).max(1) })
}

/// What each ask needs and which charts can answer it.
fn check_ask(q: &Question, ask: Ask, chart: ChartKind, before: &[Checked]) -> Result<(), String> {
    if ask == Ask::Sweep && q.sweep.is_empty() {
        return Err("ask = \"sweep\" needs sweep = [\"OPTION=VALUES\", ...]".into());
    }
    if ask != Ask::Sweep && !q.sweep.is_empty() {
        return Err(format!("sweep = [...] is for ask = \"sweep\", not \"{}\"", ask.name()));
    }
    if ask == Ask::Tool && q.args.is_empty() && q.line.iter().all(|l| l.args.is_empty()) {
        return Err("ask = \"tool\" needs the command's words in args (e.g. [\"rados\", \"bench\", \"10\", \"write\"])".into());
    }
    match (ask, &q.of) {
        (Ask::Compare, None) => {
            return Err("ask = \"compare\" needs of = \"QUESTION\": the question whose configurations it compares".into())
        }
        (Ask::Compare, Some(of)) => match before.iter().find(|b| &b.raw.id == of) {
            None => return Err(format!("of = \"{of}\": no question {of} before this one")),
            Some(b) if b.ask == Ask::Compare => return Err(format!("of = \"{of}\": {of} is a comparison itself")),
            Some(b) if b.configs.len() < 2 => {
                return Err(format!("of = \"{of}\": {of} runs on one configuration; a comparison needs two or more"))
            }
            Some(_) => {}
        },
        (_, Some(_)) => return Err(format!("of = ... is for ask = \"compare\", not \"{}\"", ask.name())),
        _ => {}
    }
    if ask == Ask::Compare && (!q.args.is_empty() || !q.line.is_empty()) {
        return Err("ask = \"compare\" runs nothing: it takes no args and no lines".into());
    }
    let fits = match chart {
        ChartKind::Lines | ChartKind::Scaling => ask == Ask::Sweep || ask == Ask::Compare,
        ChartKind::IopsLatency => matches!(ask, Ask::Sweep | Ask::Slo | Ask::Compare),
        ChartKind::Surfaces => (ask == Ask::Sweep && q.sweep.len() >= 2) || ask == Ask::Compare,
        ChartKind::Ramp => ask == Ask::Ramp,
        ChartKind::Table => true,
    };
    if !fits {
        return Err(format!(
            "chart = \"{}\" does not answer ask = \"{}\"{}",
            chart.name(),
            ask.name(),
            if chart == ChartKind::Surfaces { " (surfaces need a sweep of two dimensions or more)" } else { "" }
        ));
    }
    Ok(())
}

fn default_chart(ask: Ask) -> ChartKind {
    match ask {
        Ask::Sweep => ChartKind::Lines,
        Ask::Slo => ChartKind::IopsLatency,
        Ask::Ramp => ChartKind::Ramp,
        _ => ChartKind::Table,
    }
}

fn pick(word: &str, names: &[&str], what: &str) -> Result<usize, String> {
    names.iter().position(|n| *n == word).ok_or_else(|| format!("{what} = \"{word}\": give one of {}", names.join(", ")))
}

fn ask_of(i: usize) -> Ask {
    [Ask::Sweep, Ask::Slo, Ask::Baseline, Ask::Run, Ask::Ramp, Ask::Tool, Ask::Compare][i]
}

fn chart_of(i: usize) -> ChartKind {
    [ChartKind::Lines, ChartKind::IopsLatency, ChartKind::Surfaces, ChartKind::Scaling, ChartKind::Ramp, ChartKind::Table][i]
}

fn metric_of(i: usize) -> Metric {
    [Metric::Iops, Metric::MibS, Metric::Mean, Metric::P50, Metric::P99, Metric::P999][i]
}

/// `--scale X` on one variable: a time (seconds, or with a unit), a size
/// (bytes, or with a unit; kept a multiple of 4 KiB) or a count (at least 1).
fn scaled(v: &str, kind: ScaleKind, x: f64) -> Result<String, String> {
    use storbench_workload::units;
    Ok(match kind {
        ScaleKind::Time => {
            let d = units::parse_duration(v, std::time::Duration::from_secs(1)).map_err(|e| e.to_string())?;
            let ms = (d.as_secs_f64() * x * 1000.0).round().max(100.0) as u64;
            if ms.is_multiple_of(1000) {
                format!("{}s", ms / 1000)
            } else {
                format!("{ms}ms")
            }
        }
        ScaleKind::Size => {
            let b = units::parse_size(v).map_err(|e| e.to_string())?;
            let s = ((b as f64 * x) as u64 / 4096 * 4096).max(4096);
            units::format_size(s).replace(' ', "")
        }
        ScaleKind::Count => {
            let n: f64 = v.trim().parse().map_err(|_| "a count is a whole number".to_string())?;
            ((n * x).round().max(1.0) as u64).to_string()
        }
    })
}

/// `${name}` in a word replaced from `vars`; an unknown name refused.
pub fn substitute(word: &str, vars: &BTreeMap<String, String>) -> Result<String, CliError> {
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('}').ok_or_else(|| CliError::usage(format!("'{word}': ${{ without its closing }}")))?;
        let name = &after[..end];
        let v = vars
            .get(name)
            .ok_or_else(|| CliError::usage(format!("'{word}': no variable {name} (define it in [vars] or give --set {name}=VALUE)")))?;
        out.push_str(v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[study]
title = "t"
scale = { runtime = "time", size = "size", jobs = "count" }
[vars]
runtime = 10
size = "64m"
jobs = 4
dir = "/tmp/x"
[configs.off]
vars = { direct = "1" }
[configs.on]
label = "cache on"
[[question]]
id = "bs"
title = "by bs"
ask = "sweep"
sweep = ["bs=4k,64k"]
metrics = ["iops", "p99"]
[[question.line]]
name = "sync"
args = ["--ioengine=psync"]
[[question]]
id = "cmp"
title = "on against off"
ask = "compare"
of = "bs"
"#;

    #[test]
    fn a_file_reads_with_its_order_scale_and_defaults() {
        let f = parse(FILE, &["dir=/mnt/y".into()], Some(0.1)).unwrap();
        assert_eq!(f.configs.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["off", "on"], "the file's order");
        assert_eq!(f.configs[1].label, "cache on");
        assert_eq!(f.vars["runtime"], "1s");
        assert_eq!(storbench_workload::units::parse_size(&f.vars["size"]).unwrap(), 6710886 / 4096 * 4096, "{}", f.vars["size"]);
        assert_eq!(f.vars["jobs"], "1", "a count scaled below one is one");
        assert_eq!(f.vars["dir"], "/mnt/y");
        assert_eq!(f.questions[0].chart, ChartKind::Lines);
        assert_eq!(f.questions[0].metrics, vec![Metric::Iops, Metric::P99]);
        assert_eq!(f.questions[1].ask, Ask::Compare);
    }

    #[test]
    fn set_wins_over_a_configurations_vars_and_scale_applies_to_both() {
        let f = parse(FILE, &[], Some(0.5)).unwrap();
        let off = f.configs.iter().find(|c| c.key == "off").unwrap();
        assert_eq!(f.vars_for(off).unwrap()["direct"], "1", "the configuration's own");
        let f = parse(
            &FILE.replace("vars = { direct = \"1\" }", "vars = { direct = \"1\", runtime = \"20\" }"),
            &["direct=0".into()],
            Some(0.5),
        )
        .unwrap();
        let off = f.configs.iter().find(|c| c.key == "off").unwrap();
        let on = f.configs.iter().find(|c| c.key == "on").unwrap();
        assert_eq!(f.vars_for(off).unwrap()["direct"], "0", "--set over the configuration's");
        assert_eq!(
            (f.vars_for(off).unwrap()["runtime"].as_str(), f.vars_for(on).unwrap()["runtime"].as_str()),
            ("10s", "5s"),
            "scaled after"
        );
    }

    #[test]
    fn bad_files_are_refused_with_what_is_wrong() {
        let cases = [
            (FILE.replace("ask = \"sweep\"", "ask = \"swep\""), "give one of sweep"),
            (FILE.replace("of = \"bs\"", "of = \"nope\""), "no question nope"),
            (FILE.replace("metrics = [\"iops\", \"p99\"]", "metrics = [\"p98\"]"), "metric = \"p98\""),
            (FILE.replace("title = \"by bs\"", "title = \"by bs\"\ncolour = 1"), "unknown field `colour`"),
            (FILE.replace("dir = \"/tmp/x\"", "secret_key = \"x\""), "looks like a secret"),
            (FILE.replace("id = \"bs\"", "id = \"B S\""), "it names a directory"),
            (FILE.replace("sweep = [\"bs=4k,64k\"]", ""), "needs sweep"),
        ];
        for (text, want) in cases {
            let e = parse(&text, &[], None).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn variables_are_substituted_and_unknown_ones_refused() {
        let vars = BTreeMap::from([("dir".to_string(), "/d".to_string())]);
        assert_eq!(substitute("--filename=${dir}/f", &vars).unwrap(), "--filename=/d/f");
        assert!(substitute("${nope}", &vars).unwrap_err().message.contains("no variable nope"));
        assert!(substitute("${dir", &vars).is_err());
    }
}
