//! A set of runs, each labelled with the parameters that produced it: the
//! unit of sweeps, ramps and comparisons. A set is loaded back from results
//! directories, so anything rendered from runs can be rendered again later.

use crate::result::RunResult;
use std::path::{Path, PathBuf};
use storbench_workload::input::{read_text, RESULTS_LIMIT};

/// One run of a set, and where its results live (if they were loaded).
#[derive(Clone, Debug)]
pub struct Run {
    pub dir: Option<PathBuf>,
    pub result: RunResult,
}

/// Runs in order: the order they ran or, loaded from disk, their `step`
/// parameter when every run has one, else the order of their directories
/// (numbers in names compared as numbers).
#[derive(Clone, Debug, Default)]
pub struct RunSet {
    pub runs: Vec<Run>,
}

/// Why a results directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: no result.json here or in the directories below it; point at a results directory")]
    NoResults { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a storbench result: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("{path} has result schema version {found}; this storbench reads version {expected}")]
    Version { path: PathBuf, found: u32, expected: u32 },
}

impl RunSet {
    /// A set of one run.
    pub fn one(result: RunResult) -> RunSet {
        RunSet { runs: vec![Run { dir: None, result }] }
    }

    /// Every run of `path`: the run itself when it holds a `result.json`,
    /// else each directory directly below it that holds one.
    pub fn load(path: &Path) -> Result<RunSet, LoadError> {
        let file = path.join("result.json");
        if file.exists() {
            return Ok(RunSet { runs: vec![load_run(path)?] });
        }
        let entries = std::fs::read_dir(path).map_err(|source| LoadError::Read { path: path.into(), source })?;
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join("result.json").exists()).collect();
        if dirs.is_empty() {
            return Err(LoadError::NoResults { path: path.into() });
        }
        dirs.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        let mut runs: Vec<Run> = dirs.iter().map(|d| load_run(d)).collect::<Result<_, _>>()?;
        // Runs that know their place in the set that made them keep that order.
        if runs.iter().all(|r| r.result.parameter("step").is_some_and(|s| s.parse::<u64>().is_ok())) {
            runs.sort_by_key(|r| r.result.parameter("step").and_then(|s| s.parse::<u64>().ok()));
        }
        Ok(RunSet { runs })
    }

    pub fn push(&mut self, result: RunResult, dir: Option<PathBuf>) {
        self.runs.push(Run { dir, result });
    }

    pub fn results(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().map(|r| &r.result)
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

fn load_run(dir: &Path) -> Result<Run, LoadError> {
    let path = dir.join("result.json");
    let text = read_text(&path, "results file", RESULTS_LIMIT).map_err(|e| LoadError::Read { path: path.clone(), source: e.into() })?;
    let result: RunResult = serde_json::from_str(&text).map_err(|source| LoadError::Parse { path: path.clone(), source })?;
    if result.schema_version != crate::result::SCHEMA_VERSION {
        return Err(LoadError::Version { path, found: result.schema_version, expected: crate::result::SCHEMA_VERSION });
    }
    Ok(Run { dir: Some(dir.to_path_buf()), result })
}

/// Compare names with runs of digits as numbers: users-4 < users-16.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |s: &str| -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                let mut n = c.to_digit(10).unwrap_or(0) as u64;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    n = n.saturating_mul(10).saturating_add(d as u64);
                    chars.next();
                }
                out.push((std::mem::take(&mut text), n));
            } else {
                text.push(c);
            }
        }
        out.push((text, 0));
        out
    };
    key(a).cmp(&key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_directory_names_sort_as_numbers() {
        let mut v = vec!["users-16", "users-4", "users-8", "users-128"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["users-4", "users-8", "users-16", "users-128"]);
    }

    #[test]
    fn a_directory_without_results_is_a_clear_error() {
        let d = std::env::temp_dir().join(format!("storbench-runset-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let e = RunSet::load(&d).unwrap_err();
        assert!(e.to_string().contains("no result.json"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
