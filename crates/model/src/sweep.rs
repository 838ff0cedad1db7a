//! A sweep's index (`sweep.json`): its dimensions, every point with its
//! state and headline figures, and the knees found. Written whole when the
//! sweep starts and when it ends; in between, each finished point (and knee)
//! is one line appended to `sweep.log`, which [`SweepIndex::load`] applies
//! on top. So a sweep that is interrupted or killed can be resumed and read
//! (compared, reported) without re-reading every point's results, and what
//! a point costs to record does not grow with the points done (rewriting the
//! whole index after every point cost 205 MB a point in a 1000 x 1000 grid).

use crate::result::{JobResult, RunResult};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_metrics::LatencyHistogram;

pub const SWEEP_VERSION: u32 = 1;
pub const INDEX_FILE: &str = "sweep.json";
pub const LOG_FILE: &str = "sweep.log";

/// One line of `sweep.log`: what changed since `sweep.json` was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LogLine {
    /// Point `n` (its position in `points`) as it now is.
    Point {
        n: usize,
        point: SweepPoint,
    },
    Knee(Knee),
}

/// One swept option and its values, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    pub option: String,
    pub values: Vec<String>,
}

/// The dimension that is not a job option: how many of the fleet's agents
/// a point runs on (the first N of `--agents`, in their order), for scaling
/// over clients. Its values are counts.
pub const AGENTS: &str = "agents";

impl Dimension {
    /// A job option's dimension (set on every job of a point), as opposed
    /// to [`AGENTS`] (where the point runs).
    pub fn is_job_option(&self) -> bool {
        self.option != AGENTS
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepMode {
    /// Every combination of the dimensions' values.
    Grid,
    /// Each dimension over its values, the others at their first value.
    OneAtATime,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PointState {
    Pending,
    Done,
    /// Not run: past the knee of its curve.
    Skipped {
        reason: String,
    },
    /// Ctrl-C (or a kill) during it: run again on resume.
    Interrupted,
    /// It could not run (bad input for this combination, a target error).
    Failed {
        message: String,
    },
}

/// The figures a sweep table and a knee are judged on. Jobs of one group
/// ran together, so their rates add up; groups (fio's `stonewall`) ran one
/// after another, so theirs never do: a run of several groups keeps each
/// group's own figures in `groups`, and its headline is then every
/// operation over the groups' summed measured time (the sequence's average
/// rate, as `scope` says), never a sum of rates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointFigures {
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub errors: u64,
    /// Each group's own figures, when the run had more than one group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupFigures>,
}

/// One group of a run: the jobs that ran together and their figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupFigures {
    pub group: u32,
    pub jobs: Vec<String>,
    pub figures: PointFigures,
}

impl GroupFigures {
    /// `group 2 (randread, randwrite)`.
    pub fn label(&self) -> String {
        format!("group {} ({})", self.group, self.jobs.join(", "))
    }
}

impl PointFigures {
    pub fn of(r: &RunResult) -> PointFigures {
        let mut ids: Vec<u32> = r.jobs.iter().map(|j| j.group).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() <= 1 {
            return Self::together(&r.jobs.iter().collect::<Vec<_>>());
        }
        let groups: Vec<GroupFigures> = ids
            .iter()
            .map(|&g| {
                let jobs: Vec<&JobResult> = r.jobs.iter().filter(|j| j.group == g).collect();
                GroupFigures { group: g, jobs: jobs.iter().map(|j| j.name.clone()).collect(), figures: Self::together(&jobs) }
            })
            .collect();
        // A group lasts as long as its longest job; the groups follow each other.
        let secs: f64 =
            ids.iter().map(|&g| r.jobs.iter().filter(|j| j.group == g).map(|j| j.runtime_ns).max().unwrap_or(0) as f64 / 1e9).sum();
        let all: Vec<&JobResult> = r.jobs.iter().collect();
        let mut f = Self::together(&all);
        let ops = || r.jobs.iter().flat_map(|j| &j.ops);
        f.iops = if secs > 0.0 { ops().map(|o| o.ios).sum::<u64>() as f64 / secs } else { 0.0 };
        f.bytes_per_sec = if secs > 0.0 { ops().map(|o| o.bytes).sum::<u64>() as f64 / secs } else { 0.0 };
        f.groups = groups;
        f
    }

    /// Jobs that ran at the same time: their rates add up, their
    /// histograms merge.
    pub(crate) fn together(jobs: &[&JobResult]) -> PointFigures {
        let mut all = LatencyHistogram::new();
        let mut f = PointFigures::default();
        for o in jobs.iter().flat_map(|j| &j.ops) {
            f.iops += o.iops;
            f.bytes_per_sec += o.bytes_per_sec;
            f.errors += o.errors.values().sum::<u64>();
            all.add(&o.histogram);
        }
        f.mean_ns = all.mean();
        f.p50_ns = all.percentile(50.0);
        f.p99_ns = all.percentile(99.0);
        f.p999_ns = all.percentile(99.9);
        f
    }

    /// What the headline figures are: empty for a run of one group (its
    /// jobs together), else how they were made from groups run in turn.
    pub fn scope(&self) -> String {
        match self.groups.len() {
            0 => String::new(),
            n => format!("{n} groups one after another: all their operations over their summed time; each group below"),
        }
    }

    /// The median of each figure over repeats (a repeat's noise should not
    /// decide a knee).
    pub fn median(all: &[PointFigures]) -> PointFigures {
        fn med<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            v[v.len() / 2]
        }
        if all.is_empty() {
            return PointFigures::default();
        }
        PointFigures {
            iops: med(all.iter().map(|f| f.iops).collect()),
            bytes_per_sec: med(all.iter().map(|f| f.bytes_per_sec).collect()),
            mean_ns: med(all.iter().map(|f| f.mean_ns).collect()),
            p50_ns: med(all.iter().map(|f| f.p50_ns).collect()),
            p99_ns: med(all.iter().map(|f| f.p99_ns).collect()),
            p999_ns: med(all.iter().map(|f| f.p999_ns).collect()),
            errors: all.iter().map(|f| f.errors).sum(),
            groups: Self::median_groups(all),
        }
    }

    /// Each group's median over the repeats (a repeat whose groups differ
    /// from the first's is left out of them).
    fn median_groups(all: &[PointFigures]) -> Vec<GroupFigures> {
        all[0]
            .groups
            .iter()
            .enumerate()
            .map(|(k, g)| {
                let same: Vec<PointFigures> =
                    all.iter().filter_map(|f| f.groups.get(k).filter(|h| h.group == g.group).map(|h| h.figures.clone())).collect();
                GroupFigures { group: g.group, jobs: g.jobs.clone(), figures: PointFigures::median(&same) }
            })
            .collect()
    }
}

/// One run of a point (a point runs `repeat` times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Position in the grid (before any shuffle).
    pub index: usize,
    /// 1-based repeat of the point.
    pub repeat: u32,
    /// The point's value of each dimension, in the dimensions' order.
    pub values: Vec<String>,
    /// Its results directory, relative to the sweep's.
    pub dir: String,
    #[serde(flatten)]
    pub state: PointState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<PointFigures>,
    /// Seconds the point took (set up and clean-up included).
    #[serde(default)]
    pub seconds: f64,
    /// The `--stop-if` ceiling its hosts went over, with the figure: the
    /// last point of its curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
}

/// Where a curve stops paying: the point after which a step of its
/// dimension gained less than the threshold while latency grew.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The dimension varied along the curve.
    pub option: String,
    /// The knee point's values (all dimensions).
    pub values: Vec<String>,
    /// Which rule found it, with the numbers.
    pub rule: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepIndex {
    pub version: u32,
    /// The command line that made it (secret values replaced), for resuming.
    pub command: Vec<String>,
    pub dims: Vec<Dimension>,
    pub mode: SweepMode,
    pub repeat: u32,
    /// Seed of the shuffled order, when shuffled.
    pub shuffle: Option<u64>,
    /// Knee threshold (percent gain per step); none: every point runs.
    pub knee_gain_pct: Option<f64>,
    pub points: Vec<SweepPoint>,
    pub knees: Vec<Knee>,
}

/// Every point of a sweep, as one value per dimension. A grid varies the
/// last dimension fastest (its curves run in order, so a knee can cut one
/// short); one at a time varies each dimension from the first values of all.
pub fn grid(dims: &[Dimension], mode: SweepMode) -> Vec<Vec<String>> {
    let base: Vec<String> = dims.iter().map(|d| d.values[0].clone()).collect();
    match mode {
        SweepMode::Grid => dims.iter().fold(vec![Vec::new()], |acc, d| {
            acc.iter().flat_map(|prefix| d.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat())).collect()
        }),
        SweepMode::OneAtATime => {
            let mut out = vec![base.clone()];
            for (i, d) in dims.iter().enumerate() {
                for v in &d.values[1..] {
                    let mut p = base.clone();
                    p[i] = v.clone();
                    out.push(p);
                }
            }
            out
        }
    }
}

/// One line onto `sweep.log`, in one write (a kill cuts at most this line).
fn append(dir: &Path, line: &LogLine) -> std::io::Result<()> {
    use std::io::Write;
    let text = serde_json::to_string(line).expect("a log line serializes") + "\n";
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(dir.join(LOG_FILE))?;
    f.write_all(text.as_bytes())?;
    f.sync_data()
}

/// Why a sweep index could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: no {INDEX_FILE} here; point at a sweep directory")]
    Missing { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a storbench sweep index: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("{path} has sweep version {found}; this storbench reads version {SWEEP_VERSION}")]
    Version { path: PathBuf, found: u32 },
}

impl SweepIndex {
    pub fn load(dir: &Path) -> Result<SweepIndex, IndexError> {
        let path = dir.join(INDEX_FILE);
        if !path.exists() {
            return Err(IndexError::Missing { path: dir.into() });
        }
        let limit = storbench_workload::input::RESULTS_LIMIT;
        let text = storbench_workload::input::read_text(&path, "results file", limit)
            .map_err(|e| IndexError::Read { path: path.clone(), source: e.into() })?;
        let mut index: SweepIndex = serde_json::from_str(&text).map_err(|source| IndexError::Parse { path: path.clone(), source })?;
        if index.version != SWEEP_VERSION {
            return Err(IndexError::Version { path, found: index.version });
        }
        let log = dir.join(LOG_FILE);
        match storbench_workload::input::read_text(&log, "results file", limit) {
            Ok(lines) => index.apply(&lines),
            Err(storbench_workload::input::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(IndexError::Read { path: log, source: e.into() }),
        }
        Ok(index)
    }

    /// The log's lines on top of the index. A line that does not parse (the
    /// last one, cut short by a kill) ends it: what follows never happened.
    fn apply(&mut self, lines: &str) {
        for line in lines.lines() {
            match serde_json::from_str::<LogLine>(line) {
                Ok(LogLine::Point { n, point }) if n < self.points.len() => self.points[n] = point,
                Ok(LogLine::Knee(k)) if !self.knees.contains(&k) => self.knees.push(k),
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }

    /// Written whole to a temporary file and renamed over the old one (a
    /// kill never leaves half an index), and the log it now holds removed.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(format!("{INDEX_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(self).expect("the index serializes") + "\n")?;
        std::fs::rename(&tmp, dir.join(INDEX_FILE))?;
        match std::fs::remove_file(dir.join(LOG_FILE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Append point `n` as it now is to the log: one line, whatever the
    /// size of the sweep.
    pub fn record_point(&self, dir: &Path, n: usize) -> std::io::Result<()> {
        append(dir, &LogLine::Point { n, point: self.points[n].clone() })
    }

    /// Append a knee found to the log.
    pub fn record_knee(&self, dir: &Path, knee: &Knee) -> std::io::Result<()> {
        append(dir, &LogLine::Knee(knee.clone()))
    }

    /// Its points, in grid order.
    pub fn grid(&self) -> Vec<Vec<String>> {
        grid(&self.dims, self.mode)
    }

    /// The grid position of the point with these values.
    pub fn index_of(&self, values: &[String]) -> Option<usize> {
        self.points.iter().find(|p| p.values == values).map(|p| p.index)
    }

    /// `iodepth=8 numjobs=2`.
    pub fn label(&self, values: &[String]) -> String {
        self.dims.iter().zip(values).map(|(d, v)| format!("{}={v}", d.option)).collect::<Vec<_>>().join(" ")
    }

    pub fn is_knee(&self, values: &[String]) -> bool {
        self.knees.iter().any(|k| k.values == values)
    }

    /// Why grid point `index` has no figures, or not all of them (the state
    /// of its first run that did not finish), or the `--stop-if` ceiling a
    /// run of it went over.
    pub fn note(&self, index: usize) -> Option<String> {
        self.points.iter().filter(|p| p.index == index).find_map(|p| match &p.state {
            PointState::Done => p.ceiling.as_ref().map(|c| format!("over {c}")),
            PointState::Skipped { reason } => Some(reason.clone()),
            PointState::Failed { message } => Some(format!("failed: {message}")),
            PointState::Interrupted => Some("interrupted".into()),
            PointState::Pending => Some("not run".into()),
        })
    }

    /// The figures of each grid point (median over its finished repeats).
    pub fn figures(&self, index: usize) -> Option<PointFigures> {
        let done: Vec<PointFigures> =
            self.points.iter().filter(|p| p.index == index && p.state == PointState::Done).filter_map(|p| p.figures.clone()).collect();
        (!done.is_empty()).then(|| PointFigures::median(&done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_applies_on_top_of_the_index_up_to_a_line_cut_short() {
        let d = std::env::temp_dir().join(format!("storbench-sweeplog-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let dims = vec![Dimension { option: "iodepth".into(), values: vec!["1".into(), "2".into(), "4".into()] }];
        let points = grid(&dims, SweepMode::Grid)
            .into_iter()
            .enumerate()
            .map(|(i, values)| SweepPoint {
                index: i,
                repeat: 1,
                values,
                dir: format!("{i}"),
                state: PointState::Pending,
                figures: None,
                seconds: 0.0,
                ceiling: None,
            })
            .collect();
        let mut ix = SweepIndex {
            version: SWEEP_VERSION,
            command: vec![],
            dims,
            mode: SweepMode::Grid,
            repeat: 1,
            shuffle: None,
            knee_gain_pct: Some(5.0),
            points,
            knees: vec![],
        };
        ix.save(&d).unwrap();
        ix.points[0].state = PointState::Done;
        ix.record_point(&d, 0).unwrap();
        let knee = Knee { option: "iodepth".into(), values: vec!["1".into()], rule: "r".into() };
        ix.record_knee(&d, &knee).unwrap();
        ix.points[1].state = PointState::Done;
        ix.record_point(&d, 1).unwrap();
        // A kill in the middle of the last line: it never happened.
        let log = d.join(LOG_FILE);
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::write(&log, &text[..text.len() - 10]).unwrap();
        let back = SweepIndex::load(&d).unwrap();
        assert_eq!(back.points[0].state, PointState::Done);
        assert_eq!(back.points[1].state, PointState::Pending);
        assert_eq!(back.knees, vec![knee]);
        ix.save(&d).unwrap();
        assert!(!log.exists());
        assert_eq!(SweepIndex::load(&d).unwrap(), ix);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn grids_vary_the_last_dimension_fastest_and_one_at_a_time_shares_the_base() {
        let d = |o: &str, v: &[&str]| Dimension { option: o.into(), values: v.iter().map(|s| s.to_string()).collect() };
        let dims = [d("numjobs", &["1", "2"]), d("iodepth", &["1", "4", "16"])];
        let g = grid(&dims, SweepMode::Grid);
        assert_eq!(g.len(), 6);
        assert_eq!(
            (g[0].clone(), g[1].clone(), g[3].clone()),
            (vec!["1".to_string(), "1".into()], vec!["1".into(), "4".into()], vec!["2".into(), "1".into()])
        );
        let o = grid(&dims, SweepMode::OneAtATime);
        assert_eq!(o.len(), 4, "the base point once, then 1 + 2 more");
    }
}
