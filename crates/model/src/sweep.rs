//! A sweep's index (`sweep.json`): its dimensions, every point with its
//! state and headline figures, and the knees found. Written after every
//! point, so a sweep that is interrupted or killed can be resumed from it
//! and read (compared, reported) without re-reading every point's results.

use crate::result::RunResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_metrics::LatencyHistogram;

pub const SWEEP_VERSION: u32 = 1;
pub const INDEX_FILE: &str = "sweep.json";

/// One swept option and its values, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    pub option: String,
    pub values: Vec<String>,
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

/// The figures a sweep table and a knee are judged on: every job and
/// operation of the run together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointFigures {
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub errors: u64,
}

impl PointFigures {
    pub fn of(r: &RunResult) -> PointFigures {
        let mut all = LatencyHistogram::new();
        let mut f = PointFigures::default();
        for o in r.jobs.iter().flat_map(|j| &j.ops) {
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
        }
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
        let text = std::fs::read_to_string(&path).map_err(|source| IndexError::Read { path: path.clone(), source })?;
        let index: SweepIndex = serde_json::from_str(&text).map_err(|source| IndexError::Parse { path: path.clone(), source })?;
        if index.version != SWEEP_VERSION {
            return Err(IndexError::Version { path, found: index.version });
        }
        Ok(index)
    }

    /// Written whole to a temporary file and renamed over the old one: a
    /// kill never leaves half an index.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(format!("{INDEX_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(self).expect("the index serializes") + "\n")?;
        std::fs::rename(&tmp, dir.join(INDEX_FILE))
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

    /// Why grid point `index` has no figures, or not all of them: the state
    /// of its first run that did not finish.
    pub fn note(&self, index: usize) -> Option<String> {
        self.points.iter().filter(|p| p.index == index).find_map(|p| match &p.state {
            PointState::Done => None,
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
