//! Tidy rows: one row per point (per repeat) and job scope, with every swept
//! value as a column of its own, for spreadsheets and notebooks
//! (`storbench export`, a study's `points.csv` and `points.json`).
//!
//! A run gives a row `all` (its [`PointFigures::of`]: jobs of one group
//! added, groups run one after another never summed) and, when it had
//! several jobs, one row per job, and per group when it had several groups.
//! A sweep gives those rows for each point that has figures, an SLO search
//! for each probe (rate and iodepth as swept columns), a study for each
//! step, with its question, configuration and line filled. Figures are
//! plain numbers in fixed units (µs, MiB/s); swept sizes are bytes.

use crate::result::{JobResult, RunResult};
use crate::runset::{LoadError, RunSet};
use crate::slo::{Probe, SloIndex, SLO_FILE};
use crate::study::{StepState, StudyIndex, STUDY_INDEX};
use crate::sweep::{PointFigures, PointState, SweepIndex, INDEX_FILE};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The columns before the swept ones.
pub const LEAD: [&str; 6] = ["study", "question", "config", "line", "ask", "dir"];
/// The columns after the swept ones.
pub const TAIL: [&str; 10] = ["repeat", "scope", "iops", "mib_s", "mean_us", "p50_us", "p99_us", "p999_us", "errors", "mark"];

/// One row of the table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TidyRow {
    /// The study's title (empty outside a study).
    pub study: String,
    pub question: String,
    /// The configuration's key.
    pub config: String,
    pub line: String,
    /// What made the run: sweep, slo, run, or the study question's ask.
    pub ask: String,
    /// The run's results directory.
    pub dir: String,
    /// The swept values, in the dimensions' order.
    #[serde(with = "ordered")]
    pub swept: Vec<(String, String)>,
    /// 1-based repeat of the point (a probe: of its rate).
    pub repeat: u32,
    /// `all`, a job's name, or `group N`.
    pub scope: String,
    pub iops: f64,
    pub mib_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub errors: u64,
    /// Words about the point: `knee`, `interrupted`; a probe's `pass` or
    /// `fail` and `answer` on the answer's; `step-failed` or
    /// `step-interrupted` on what a study's unfinished step measured.
    pub mark: String,
}

/// Rows and the swept columns they have between them, in the order first met.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TidyTable {
    pub swept: Vec<String>,
    pub rows: Vec<TidyRow>,
}

/// A cell: text, or a plain number.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Int(u64),
    Float(f64),
    /// A value the row was not swept over.
    Empty,
}

impl TidyTable {
    pub fn new(rows: Vec<TidyRow>) -> TidyTable {
        let mut swept: Vec<String> = Vec::new();
        for (k, _) in rows.iter().flat_map(|r| &r.swept) {
            if !swept.contains(k) {
                swept.push(k.clone());
            }
        }
        TidyTable { swept, rows }
    }

    pub fn columns(&self) -> Vec<String> {
        LEAD.iter().map(|c| c.to_string()).chain(self.swept.iter().cloned()).chain(TAIL.iter().map(|c| c.to_string())).collect()
    }

    /// A row's cells in the columns' order; a value it was not swept over is empty.
    pub fn cells(&self, r: &TidyRow) -> Vec<Cell> {
        let t = |s: &str| Cell::Text(s.to_string());
        let mut out = vec![t(&r.study), t(&r.question), t(&r.config), t(&r.line), t(&r.ask), t(&r.dir)];
        for c in &self.swept {
            out.push(r.swept.iter().find(|(k, _)| k == c).map_or(Cell::Empty, |(_, v)| swept_cell(v)));
        }
        out.extend([Cell::Int(r.repeat as u64), t(&r.scope)]);
        out.extend([r.iops, r.mib_s, r.mean_us, r.p50_us, r.p99_us, r.p999_us].map(Cell::Float));
        out.extend([Cell::Int(r.errors), t(&r.mark)]);
        out
    }
}

/// A swept value that is a number stays one for a spreadsheet.
fn swept_cell(v: &str) -> Cell {
    match v.parse::<u64>() {
        Ok(n) => Cell::Int(n),
        Err(_) => match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Cell::Float(x),
            _ => Cell::Text(v.to_string()),
        },
    }
}

/// A swept option's value as a plain number where the option's kind has
/// one (`4k` -> `4096`, `1m` rate -> `1000000`); words as given.
pub fn plain_value(option: &str, value: &str) -> String {
    let kind = storbench_workload::options::core(option).map(|o| o.info.kind);
    match kind.and_then(|k| storbench_workload::options::axis::magnitude(k, value)) {
        Some(x) if x.fract() == 0.0 && x.abs() < 9e15 => format!("{}", x as i64),
        Some(x) => format!("{x}"),
        None => value.to_string(),
    }
}

/// The figures of one scope of a run.
fn row(scope: &str, f: &PointFigures) -> TidyRow {
    TidyRow {
        scope: scope.to_string(),
        iops: f.iops,
        mib_s: f.bytes_per_sec / (1024.0 * 1024.0),
        mean_us: f.mean_ns / 1e3,
        p50_us: f.p50_ns as f64 / 1e3,
        p99_us: f.p99_ns as f64 / 1e3,
        p999_us: f.p999_ns as f64 / 1e3,
        errors: f.errors,
        repeat: 1,
        ..TidyRow::default()
    }
}

/// A run's rows: `all` (from `all`, its [`PointFigures::of`]), then each
/// group's when there were several, then each job's when there were several.
pub fn run_rows(r: &RunResult, all: &PointFigures) -> Vec<TidyRow> {
    let mut rows = vec![row("all", all)];
    rows.extend(all.groups.iter().map(|g| row(&format!("group {}", g.group), &g.figures)));
    if r.jobs.len() > 1 {
        rows.extend(r.jobs.iter().map(|j| row(&j.name, &job_figures(j))));
    }
    rows
}

fn job_figures(j: &JobResult) -> PointFigures {
    PointFigures::together(&[j])
}

/// Every row with this ask, these swept values, repeat and mark.
fn tag(mut rows: Vec<TidyRow>, ask: &str, swept: &[(String, String)], repeat: u32, mark: &str) -> Vec<TidyRow> {
    for r in &mut rows {
        r.ask = ask.to_string();
        r.swept = swept.to_vec();
        r.repeat = repeat;
        r.mark = mark.to_string();
    }
    rows
}

/// A sweep's rows: each point and repeat that has figures (points skipped
/// past a knee, failed or not run have none and are left out). `run` loads
/// a point's result (by its directory, relative to the sweep's) for its
/// per-job rows; without it the point has its `all` row only.
pub fn sweep_rows(index: &SweepIndex, run: impl Fn(&str) -> Option<RunResult>) -> Vec<TidyRow> {
    let mut out = Vec::new();
    for p in &index.points {
        let Some(f) = &p.figures else { continue };
        let swept: Vec<(String, String)> =
            index.dims.iter().zip(&p.values).map(|(d, v)| (d.option.clone(), plain_value(&d.option, v))).collect();
        let mut mark = Vec::new();
        if index.is_knee(&p.values) {
            mark.push("knee");
        }
        if p.state == PointState::Interrupted {
            mark.push("interrupted");
        }
        let rows = match run(&p.dir) {
            Some(r) => run_rows(&r, f),
            None => vec![row("all", f)],
        };
        out.extend(dir_of(tag(rows, "sweep", &swept, p.repeat, &mark.join(" ")), &p.dir));
    }
    out
}

/// An SLO search's rows: each probe's run, its rate and queue depth as
/// swept values, marked `pass` or `fail`, and `answer` on the answer's.
pub fn slo_rows(index: &SloIndex, run: impl Fn(&str) -> Option<RunResult>) -> Vec<TidyRow> {
    let mut out = Vec::new();
    for (n, p) in index.probes.iter().enumerate() {
        let Some(r) = run(&p.dir) else { continue };
        let mut swept = Vec::new();
        if let Some(rate) = p.rate {
            swept.push(("rate".to_string(), format!("{rate}")));
        }
        if let Some(q) = p.iodepth {
            swept.push(("iodepth".to_string(), q.to_string()));
        }
        let repeat = 1 + index.probes[..n].iter().filter(|q| q.rate == p.rate && q.iodepth == p.iodepth).count() as u32;
        let mut mark = if p.pass { "pass" } else { "fail" }.to_string();
        if is_answer(index, p) {
            mark.push_str(" answer");
        }
        let rows = run_rows(&r, &PointFigures::of(&r));
        out.extend(dir_of(tag(rows, "slo", &swept, repeat, &mark), &p.dir));
    }
    out
}

/// The probe that gave the search its answer: a passing one at the answer's
/// rate (closed loop: at its queue depth).
fn is_answer(index: &SloIndex, p: &Probe) -> bool {
    if !p.pass {
        return false;
    }
    if index.closed_loop {
        return index.answer_iodepth.is_some() && p.iodepth == index.answer_iodepth;
    }
    index.answer.is_some() && p.rate == index.answer
}

/// Rows with their directory put under `dir`.
fn dir_of(rows: Vec<TidyRow>, dir: &str) -> impl Iterator<Item = TidyRow> + '_ {
    rows.into_iter().map(move |mut r| {
        r.dir = join(dir, &r.dir);
        r
    })
}

pub(crate) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// Why a directory gave no rows.
#[derive(Debug, thiserror::Error)]
pub enum TidyError {
    #[error(
        "{0}: not a run, sweep, SLO search or study directory (no result.json, sweep.json, slo.json or study.json here or in the directories below it)"
    )]
    NotResults(PathBuf),
    #[error("{0}")]
    Load(String),
}

impl From<LoadError> for TidyError {
    fn from(e: LoadError) -> Self {
        TidyError::Load(e.to_string())
    }
}

/// What a results directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirKind {
    Study,
    Sweep,
    Slo,
    Run,
}

pub fn kind_of(dir: &Path) -> Option<DirKind> {
    [(STUDY_INDEX, DirKind::Study), (INDEX_FILE, DirKind::Sweep), (SLO_FILE, DirKind::Slo), ("result.json", DirKind::Run)]
        .into_iter()
        .find(|(f, _)| dir.join(f).is_file())
        .map(|(_, k)| k)
}

/// The rows of a run, sweep, SLO search or study directory, or of each such
/// directory directly below `dir`; their `dir` is relative to `dir`.
pub fn load(dir: &Path) -> Result<Vec<TidyRow>, TidyError> {
    if let Some(kind) = kind_of(dir) {
        return load_kind(dir, kind);
    }
    let below = subdirs(dir).map_err(|e| TidyError::Load(format!("cannot read {}: {e}", dir.display())))?;
    let found: Vec<(String, DirKind)> = below.into_iter().filter_map(|(name, p)| kind_of(&p).map(|k| (name, k))).collect();
    if found.is_empty() {
        return Err(TidyError::NotResults(dir.to_path_buf()));
    }
    let mut out = Vec::new();
    for (name, kind) in found {
        out.extend(dir_of(load_kind(&dir.join(&name), kind)?, &name));
    }
    Ok(out)
}

/// The directories directly below `dir`, by name (numbers as numbers).
pub(crate) fn subdirs(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    v.sort_by(|a, b| crate::runset::natural_cmp(&a.0, &b.0));
    Ok(v)
}

fn load_kind(dir: &Path, kind: DirKind) -> Result<Vec<TidyRow>, TidyError> {
    let run = |d: &str| RunSet::load(&dir.join(d)).ok().and_then(|s| (s.runs.len() == 1).then(|| s.runs[0].result.clone()));
    match kind {
        DirKind::Study => study(dir),
        DirKind::Sweep => Ok(sweep_rows(&SweepIndex::load(dir).map_err(|e| TidyError::Load(e.to_string()))?, run)),
        DirKind::Slo => Ok(slo_rows(&SloIndex::load(dir).map_err(TidyError::Load)?, run)),
        DirKind::Run => {
            let set = RunSet::load(dir)?;
            let r = &set.runs[0].result;
            let mut rows = run_rows(r, &PointFigures::of(r));
            let repeat = r.parameter("repeat").and_then(|v| v.parse().ok()).unwrap_or(1);
            rows.iter_mut().for_each(|x| {
                x.ask = "run".into();
                x.repeat = repeat;
            });
            Ok(rows)
        }
    }
}

/// A study's rows: every step's, in the index's order, with the study's
/// title and the step's question, configuration, line and ask. A step
/// whose directory holds no results yet (pending, failed before running)
/// has none; a study's steps are never studies.
fn study(dir: &Path) -> Result<Vec<TidyRow>, TidyError> {
    let index = StudyIndex::load(dir).map_err(TidyError::Load)?;
    let mut out = Vec::new();
    for s in &index.steps {
        // A step's directory outside the study's (an edited index) is not read.
        let Some(rel) = s.rel_dir() else { continue };
        let step_dir = dir.join(rel);
        if kind_of(&step_dir) == Some(DirKind::Study) || !step_dir.is_dir() {
            continue;
        }
        let rows = match load(&step_dir) {
            Ok(rows) => rows,
            Err(TidyError::NotResults(_)) => continue,
            Err(e) => return Err(e),
        };
        let ask = index.question(&s.question).map_or("", |q| q.ask.name());
        let state = step_mark(&s.state);
        for mut r in dir_of(rows, &s.dir) {
            r.study = index.title.clone();
            r.question = s.question.clone();
            r.config = s.config.clone();
            r.line = s.line.clone();
            r.ask = ask.to_string();
            if !state.is_empty() {
                r.mark = [r.mark.as_str(), state].iter().filter(|m| !m.is_empty()).copied().collect::<Vec<_>>().join(" ");
            }
            out.push(r);
        }
    }
    Ok(out)
}

/// What the rows of a step that did not finish say of it (their figures
/// are what it measured before it stopped).
fn step_mark(state: &StepState) -> &'static str {
    match state {
        StepState::Done => "",
        StepState::Interrupted => "step-interrupted",
        StepState::Failed { .. } => "step-failed",
        StepState::Pending => "step-pending",
    }
}

/// The swept values as a JSON object in their order (a map would sort them).
mod ordered {
    use serde::de::{MapAccess, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(v.iter().map(|(k, v)| (k, v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of swept options to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(pair) = m.next_entry()? {
                    v.push(pair);
                }
                Ok(v)
            }
        }
        d.deserialize_map(Pairs)
    }
}
