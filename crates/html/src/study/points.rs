//! A study's steps as the report reads them: each step's data as curves
//! (a sweep's points along its last dimension, the others fixed), its runs'
//! figures, and the axis a swept option is drawn on (values placed by their
//! meaning, sizes with units, log where they span more than 16x).

use crate::StepData;
use std::collections::HashMap;
use storbench_model::study::{Step, StudyIndex};
use storbench_model::sweep::{PointFigures, PointState, SweepIndex, SweepPoint};
use storbench_model::{RunResult, RunSet};
use storbench_report::fmt::count;
use storbench_workload::options::{axis, Kind};

/// One step of a question with its data and its legend's name.
pub struct View<'a> {
    pub step: &'a Step,
    pub data: &'a StepData,
    /// Config label and line name, as far as they tell steps apart.
    pub label: String,
}

/// A question's steps (a compare question: those of the question it
/// compares), each named for the legend: the configuration's label when
/// the question runs on several, the line's name when it has several
/// (nothing for a question of one step), never A/B.
pub fn views<'a>(index: &'a StudyIndex, steps: &'a [StepData], id: &str) -> Vec<View<'a>> {
    let q = index.question(id);
    let of = q.and_then(|q| q.of.as_deref()).unwrap_or(id);
    let own: Vec<(&Step, &StepData)> = index.steps.iter().zip(steps).filter(|(s, _)| s.question == of).collect();
    let configs = distinct(own.iter().map(|(s, _)| s.config.as_str()));
    let lines = distinct(own.iter().map(|(s, _)| s.line.as_str()));
    own.into_iter()
        .map(|(step, data)| {
            let mut parts = Vec::new();
            if configs > 1 {
                parts.push(index.config_label(&step.config));
            }
            if lines > 1 {
                parts.push(step.line.clone());
            }
            View { step, data, label: parts.join(" · ") }
        })
        .collect()
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> usize {
    let mut v: Vec<&str> = items.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// One point of a curve: the swept value, its figures (median over
/// repeats) and the run's directory when there is one.
#[derive(Clone, Debug)]
pub struct Pt {
    pub value: String,
    pub fig: PointFigures,
    pub dir: Option<String>,
}

/// A step's points along one swept option, the other options fixed.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The legend: the step's label and the fixed options (`numjobs=2`).
    pub label: String,
    /// The step it came from (index into the views).
    pub view: usize,
    pub option: String,
    /// `numjobs=2 iodepth=8`: the other dimensions' values.
    pub fixed: String,
    pub points: Vec<Pt>,
    /// Values of the points that are knees along this option.
    pub knees: Vec<String>,
}

/// Every sweep step's curves along its last dimension, in the views' order.
pub fn curves(views: &[View]) -> Vec<Curve> {
    views.iter().enumerate().flat_map(|(i, v)| sweep_of(v).map(|(ix, _)| sweep_curves(ix, i, &v.label)).unwrap_or_default()).collect()
}

pub fn sweep_of<'a>(v: &View<'a>) -> Option<(&'a SweepIndex, &'a RunSet)> {
    match v.data {
        StepData::Sweep { index, runs } => Some((index, runs)),
        _ => None,
    }
}

fn sweep_curves(ix: &SweepIndex, view: usize, step_label: &str) -> Vec<Curve> {
    let Some(last) = ix.dims.len().checked_sub(1) else { return Vec::new() };
    let option = ix.dims[last].option.clone();
    let mut out: Vec<Curve> = Vec::new();
    let mut by_fixed: HashMap<String, usize> = HashMap::new();
    for g in grid_points(ix) {
        let Some(fig) = g.figures else { continue };
        let fixed = ix.dims[..last]
            .iter()
            .zip(&g.values)
            .map(|(d, x)| format!("{}={}", d.option, axis::label(&d.option, x)))
            .collect::<Vec<_>>()
            .join(" ");
        let knee = ix.knees.iter().any(|k| k.values == g.values && k.option == option);
        let pt = Pt { value: g.values[last].clone(), fig, dir: g.dir };
        let at = *by_fixed.entry(fixed.clone()).or_insert_with(|| {
            let label = [step_label, &fixed].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ");
            out.push(Curve { label, view, option: option.clone(), fixed, points: Vec::new(), knees: Vec::new() });
            out.len() - 1
        });
        if knee {
            out[at].knees.push(pt.value.clone());
        }
        out[at].points.push(pt);
    }
    for c in &mut out {
        order(&c.option, &mut c.points);
    }
    out
}

/// A grid point as the report shows it.
pub struct GridPoint {
    pub values: Vec<String>,
    /// The median over its finished repeats.
    pub figures: Option<PointFigures>,
    /// Its first run's directory.
    pub dir: Option<String>,
    /// Why it has no figures, or not all: its first run that did not finish.
    pub note: Option<String>,
}

/// Every grid point of a sweep in grid order, its runs gathered in one
/// pass (looking each point up among all runs made a 20,000-point sweep's
/// report take 24 s).
pub fn grid_points(ix: &SweepIndex) -> Vec<GridPoint> {
    let mut runs: HashMap<usize, Vec<&SweepPoint>> = HashMap::new();
    for p in &ix.points {
        runs.entry(p.index).or_default().push(p);
    }
    ix.grid()
        .into_iter()
        .enumerate()
        .map(|(i, values)| {
            let mine = runs.remove(&i).unwrap_or_default();
            let done: Vec<PointFigures> = mine.iter().filter(|p| p.state == PointState::Done).filter_map(|p| p.figures.clone()).collect();
            let note = mine.iter().find_map(|p| match &p.state {
                PointState::Done => None,
                PointState::Skipped { reason } => Some(reason.clone()),
                PointState::Failed { message } => Some(format!("failed: {message}")),
                PointState::Interrupted => Some("interrupted".into()),
                PointState::Pending => Some("not run".into()),
            });
            let figures = (!done.is_empty()).then(|| PointFigures::median(&done));
            GridPoint { values, figures, dir: mine.first().map(|p| p.dir.clone()), note }
        })
        .collect()
}

/// A step's runs by their directory's name, to find a point's run at once.
pub fn runs_by_dir(runs: &RunSet) -> HashMap<String, &RunResult> {
    runs.runs.iter().filter_map(|r| Some((r.dir.as_ref()?.file_name()?.to_string_lossy().into_owned(), &r.result))).collect()
}

/// An option's kind of value, from the option table (none for `agents`
/// and words the table does not know: counts then).
fn kind(option: &str) -> Kind {
    storbench_workload::options::core(option).map_or(Kind::Count, |o| o.info.kind)
}

/// Points in the order of their values' meaning (512 < 4k < 1m).
fn order(option: &str, points: &mut [Pt]) {
    let k = kind(option);
    if points.iter().all(|p| axis::magnitude(k, &p.value).is_some()) {
        points.sort_by(|a, b| axis::magnitude(k, &a.value).unwrap_or(0.0).total_cmp(&axis::magnitude(k, &b.value).unwrap_or(0.0)));
    }
}

/// Where a swept option's values go on an x axis.
pub struct Axis {
    pub option: String,
    /// Positions are log2 of the values (sizes or depths over > 16x).
    pub log: bool,
    /// Positions are the values' places in order (words).
    pub positional: bool,
    /// Every value seen, in order, and its position.
    pub values: Vec<(String, f64)>,
}

/// Options whose values are depths or counts: read on a log axis once
/// they span more than 16x (1, 2, 4 ... 256 would crowd the first ticks).
const DEPTHS: &[&str] = &["iodepth", "numjobs", "volumes", "images", "agents", "users", "threads", "connections"];

impl Axis {
    pub fn of(option: &str, curves: &[&Curve]) -> Axis {
        let mut seen: Vec<Pt> = Vec::new();
        for p in curves.iter().flat_map(|c| &c.points) {
            if !seen.iter().any(|s| s.value == p.value) {
                seen.push(p.clone());
            }
        }
        order(option, &mut seen);
        let k = kind(option);
        let mags: Option<Vec<f64>> = seen.iter().map(|p| axis::magnitude(k, &p.value)).collect();
        let (log, positional, xs) = match mags {
            Some(m) if !m.is_empty() => {
                let (lo, hi) = m.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
                let wide = lo > 0.0 && hi / lo > 16.0 && (k == Kind::Size || DEPTHS.contains(&option));
                (wide, false, if wide { m.iter().map(|v| v.log2()).collect() } else { m })
            }
            _ => (false, true, (0..seen.len()).map(|i| i as f64).collect()),
        };
        Axis { option: option.into(), log, positional, values: seen.into_iter().map(|p| p.value).zip(xs).collect() }
    }

    pub fn x(&self, value: &str) -> Option<f64> {
        self.values.iter().find(|v| v.0 == value).map(|v| v.1)
    }

    /// A tick's label: a value's own label where the tick is on a value
    /// (log and word axes label nothing between values); on a linear axis
    /// of numbers, the number (sizes with units).
    pub fn tick(&self, x: f64) -> String {
        let span = self.values.last().map_or(1.0, |l| l.1) - self.values.first().map_or(0.0, |f| f.1);
        let near = self.values.iter().find(|v| (v.1 - x).abs() <= span.abs().max(1.0) * 0.005);
        match near {
            Some(v) => axis::label(&self.option, &v.0),
            None if self.log || self.positional => String::new(),
            None if kind(&self.option) == Kind::Size && x >= 0.0 => storbench_workload::units::format_size(x.round() as u64),
            None => {
                if x.fract().abs() < 1e-9 {
                    format!("{x:.0}")
                } else {
                    format!("{x:.1}")
                }
            }
        }
    }

    /// The axis' description: the option, and "log" when it is one.
    pub fn desc(&self) -> String {
        if self.log {
            format!("{} (log scale)", self.option)
        } else {
            self.option.clone()
        }
    }
}

/// What a point's figures add up, with the share of each part where the
/// parts ran together: one job (of N workers, per worker), jobs together
/// (per job), groups one after another (never a sum of rates), a fleet's
/// agents (per agent; from the run, else the swept count).
pub fn scope(fig: &PointFigures, run: Option<&RunResult>, agents: Option<u32>) -> String {
    let per = |n: usize, what: &str| format!("{} IOPS per {what}", count(fig.iops / n as f64));
    let jobs = run.map_or(0, |r| r.jobs.len());
    let workers = run.and_then(|r| r.jobs.first()).map_or(1, |j| j.workers.max(1) as usize);
    let mut parts = vec![match (fig.groups.len(), jobs) {
        (n, _) if n > 1 => format!("{n} groups one after another, all their operations over their summed time"),
        (_, 0) => String::new(),
        (_, 1) if workers > 1 => format!("one job of {workers} workers, {}", per(workers, "worker")),
        (_, 1) => "one job".into(),
        (_, n) => format!("total of {n} jobs together, {}", per(n, "job")),
    }];
    let fleet = run.map(|r| r.agents.len() as u32).filter(|n| *n > 1).or(agents);
    if let Some(n) = fleet.filter(|n| *n > 1) {
        parts.push(format!("over {n} agents, {}", per(n as usize, "agent")));
    }
    parts.retain(|p| !p.is_empty());
    parts.join(", ")
}

/// A compatibility tool's phase (swift-bench's PUT, GET, DELETE), which
/// names a run among its step's runs.
pub fn phase(r: &RunResult) -> Option<String> {
    r.parameter("phase").map(str::to_uppercase)
}

/// A run's figures as a whole (`all`) and per job when it has several.
pub fn run_rows(r: &RunResult) -> Vec<(String, PointFigures)> {
    let mut out = vec![("all".to_string(), PointFigures::of(r))];
    if r.jobs.len() > 1 {
        let mut one = r.clone();
        for j in &r.jobs {
            one.jobs = vec![j.clone()];
            out.push((format!("job {}", j.name), PointFigures::of(&one)));
        }
    }
    out
}
