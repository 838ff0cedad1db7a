//! A study's index (`study.json`): the questions a study file asks, the
//! configurations it runs them on, and every step (one storbench command
//! into a directory of its own) with its state. Written when the study
//! starts and after every step, so a study that is stopped or killed is
//! resumed from it (`study --resume DIR`) and reported as far as it went.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const STUDY_VERSION: u32 = 1;
pub const STUDY_INDEX: &str = "study.json";
/// The study file as given, kept beside the index.
pub const STUDY_FILE: &str = "study.toml";

/// What a question runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    Sweep,
    Slo,
    Baseline,
    Run,
    /// `run --ssbench F --users ...`: a ramp over user counts.
    Ramp,
    /// A command of its own (a compatibility tool's words).
    Tool,
    /// No runs: another question's steps, each configuration against the first.
    Compare,
}

impl Ask {
    pub const NAMES: [&'static str; 7] = ["sweep", "slo", "baseline", "run", "ramp", "tool", "compare"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The chart that answers a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChartKind {
    /// A figure over the last swept dimension, one line per configuration and line.
    Lines,
    /// Latency against IOPS, knees and the SLO answer marked.
    IopsLatency,
    /// A 2-D sweep's grid per configuration side by side, and their difference.
    Surfaces,
    /// IOPS against agents or volumes with the linear-scaling line.
    Scaling,
    /// Throughput against users, the peak marked.
    Ramp,
    /// One row per step.
    Table,
}

impl ChartKind {
    pub const NAMES: [&'static str; 6] = ["lines", "iops-latency", "surfaces", "scaling", "ramp", "table"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// A figure a chart can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    MibS,
    Mean,
    P50,
    P99,
    P999,
}

impl Metric {
    pub const NAMES: [&'static str; 6] = ["iops", "mib_s", "mean", "p50", "p99", "p999"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn is_latency(self) -> bool {
        matches!(self, Metric::Mean | Metric::P50 | Metric::P99 | Metric::P999)
    }
}

/// A named alternative every question can run on (two clusters, cache on
/// and off, kernel against librbd).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    pub key: String,
    /// The legend's name.
    pub label: String,
}

/// One question as the report needs it (the study file's words are in the
/// steps' commands).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionInfo {
    pub id: String,
    pub title: String,
    pub ask: Ask,
    pub chart: ChartKind,
    pub metrics: Vec<Metric>,
    /// The configurations it runs on, in order (the first is the one others
    /// are compared with).
    pub configs: Vec<String>,
    /// Its lines (series), in order.
    pub lines: Vec<String>,
    /// A compare question's question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// A sweep's `--sweep` words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StepState {
    Pending,
    Done,
    /// Ctrl-C (or a kill) during it: resumed or run again on resume.
    Interrupted,
    /// Its command failed (exit code and the error's line).
    Failed {
        code: i32,
        message: String,
    },
}

/// One storbench command of a study, into its own directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub question: String,
    pub config: String,
    pub line: String,
    /// Its results directory, relative to the study's.
    pub dir: String,
    /// The command's words after `storbench` (secret values replaced).
    pub command: Vec<String>,
    #[serde(flatten)]
    pub state: StepState,
    /// Seconds it took (set up and clean-up included), over every attempt.
    #[serde(default)]
    pub seconds: f64,
    /// Seconds it was expected to take.
    #[serde(default)]
    pub estimate: f64,
}

impl Step {
    /// Its directory relative to the study's, when it stays inside it: the
    /// index is a file anyone can edit, so an absolute path or `..` is never
    /// followed (a report or an export of the study reads nothing else).
    pub fn rel_dir(&self) -> Option<&Path> {
        let rel = Path::new(&self.dir);
        let inside = !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        inside.then_some(rel)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyIndex {
    pub version: u32,
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub about: String,
    /// The command line that made it (secret values replaced).
    pub command: Vec<String>,
    /// The study file's variables with `--set` and `--scale` applied (a
    /// configuration's own may differ: its steps' commands say).
    pub vars: BTreeMap<String, String>,
    /// What `--set` gave and the `--scale` factor, for resuming.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    pub configs: Vec<ConfigInfo>,
    pub questions: Vec<QuestionInfo>,
    pub steps: Vec<Step>,
    pub started_unix: u64,
}

impl StudyIndex {
    pub fn load(dir: &Path) -> Result<StudyIndex, String> {
        let path = dir.join(STUDY_INDEX);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e} (not a study's results directory?)", path.display()))?;
        let index: StudyIndex = serde_json::from_str(&text).map_err(|e| format!("{}: not a study index: {e}", path.display()))?;
        if index.version != STUDY_VERSION {
            return Err(format!("{}: study index version {} (this storbench reads {STUDY_VERSION})", path.display(), index.version));
        }
        Ok(index)
    }

    /// Written whole to a temporary file and renamed: a kill never leaves
    /// half an index.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = dir.join(format!("{STUDY_INDEX}.tmp"));
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(tmp, dir.join(STUDY_INDEX))
    }

    pub fn question(&self, id: &str) -> Option<&QuestionInfo> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// A question's steps in order.
    pub fn steps_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Step> + 'a {
        self.steps.iter().filter(move |s| s.question == id)
    }

    /// A configuration's legend name (its key when it has none).
    pub fn config_label(&self, key: &str) -> String {
        self.configs.iter().find(|c| c.key == key).map_or_else(|| key.to_string(), |c| c.label.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_reads_back_as_written() {
        let index = StudyIndex {
            version: STUDY_VERSION,
            title: "t".into(),
            about: String::new(),
            command: vec!["study".into(), "f.toml".into()],
            vars: BTreeMap::from([("dir".to_string(), "/tmp/x".to_string())]),
            set: BTreeMap::new(),
            scale: Some(0.5),
            configs: vec![ConfigInfo { key: "default".into(), label: "default".into() }],
            questions: vec![QuestionInfo {
                id: "q".into(),
                title: "Q".into(),
                ask: Ask::Sweep,
                chart: ChartKind::IopsLatency,
                metrics: vec![Metric::Iops, Metric::P99],
                configs: vec!["default".into()],
                lines: vec!["all".into()],
                of: None,
                sweep: vec!["iodepth=1,2".into()],
            }],
            steps: vec![Step {
                question: "q".into(),
                config: "default".into(),
                line: "all".into(),
                dir: "q/default/all".into(),
                command: vec!["sweep".into()],
                state: StepState::Failed { code: 2, message: "m".into() },
                seconds: 1.5,
                estimate: 2.0,
            }],
            started_unix: 1,
        };
        let dir = std::env::temp_dir().join(format!("storbench-study-index-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        index.save(&dir).unwrap();
        let back = StudyIndex::load(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back, index);
        let text = serde_json::to_string(&back.questions[0]).unwrap();
        assert!(text.contains("\"chart\":\"iops-latency\"") && text.contains("\"ask\":\"sweep\""), "{text}");
        assert_eq!(Ask::Compare.name(), "compare");
        let mut step = back.steps[0].clone();
        assert_eq!(step.rel_dir(), Some(Path::new("q/default/all")));
        for bad in ["/etc", "../x", "q/../../x", ""] {
            step.dir = bad.into();
            assert_eq!(step.rel_dir(), None, "{bad}");
        }
        assert_eq!(ChartKind::Table.name(), "table");
        assert_eq!(Metric::P999.name(), "p999");
    }
}
