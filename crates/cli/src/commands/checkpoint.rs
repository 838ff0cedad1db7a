//! A checkpoint preset's figures as MLPerf Storage's rules report them
//! (mlcommons/storage, checkpointing/README.md): for each of the ten
//! checkpoints written and the ten read, its duration is the slowest
//! rank's (the job's time: every rank starts together) and its throughput
//! the slowest rank's (its shard over that time); `checkpoint.json` in the
//! results directory keeps them, with the means over the ten. A checkpoint
//! that did not complete (interrupted, failed, short) is named and left out
//! of the figures, and the result is marked invalid.

use crate::error::CliError;
use crate::sources::preset::{CheckpointPlan, CHECKPOINTS};
use serde::Serialize;
use std::path::Path;
use storbench_model::{JobResult, RunResult};

/// One phase (the writes, or the reads) of the ten checkpoints.
#[derive(Debug, PartialEq, Serialize)]
pub struct PhaseFigures {
    /// Each completed checkpoint's duration, the slowest rank's, s.
    pub durations_s: Vec<f64>,
    pub mean_duration_s: f64,
    /// The slowest rank's throughput: a rank's bytes moved over the mean duration, bytes/s.
    pub rank_bytes_per_sec: f64,
    /// The bytes the completed checkpoints moved over their time, bytes/s.
    pub bytes_per_sec: f64,
    /// Checkpoints that did not complete (interrupted, failed, short, or
    /// never run), and why: in no figure above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct CheckpointFigures {
    pub preset: String,
    pub mode: &'static str,
    pub ranks: u32,
    pub rank_bytes: u64,
    pub checkpoint_bytes: u64,
    /// Every checkpoint written and read whole, as the rules ask: a result
    /// with fewer is not one the rules report.
    pub valid: bool,
    pub write: PhaseFigures,
    pub read: PhaseFigures,
}

/// One checkpoint's job as it ran: its time (the slowest rank's), the bytes
/// it moved, and why it did not complete, if it did not.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpointed {
    pub duration_ns: u64,
    pub bytes: u64,
    pub incomplete: Option<String>,
}

/// A phase's figures from its checkpoints; those that did not complete are
/// named, not counted: a checkpoint cut short took less time for fewer
/// bytes, and counting it as whole would overstate the throughput.
pub fn phase(ranks: u32, expected: usize, done: &[Checkpointed]) -> PhaseFigures {
    let complete: Vec<&Checkpointed> = done.iter().filter(|c| c.incomplete.is_none()).collect();
    let durations_s: Vec<f64> = complete.iter().map(|c| c.duration_ns as f64 / 1e9).collect();
    let total_s: f64 = durations_s.iter().sum();
    let mean = if complete.is_empty() { 0.0 } else { total_s / complete.len() as f64 };
    let bytes: u64 = complete.iter().map(|c| c.bytes).sum();
    let per_sec = if total_s > 0.0 { bytes as f64 / total_s } else { 0.0 };
    let mut incomplete: Vec<String> = done.iter().filter_map(|c| c.incomplete.clone()).collect();
    if done.len() < expected {
        incomplete.push(format!("{} not run", expected - done.len()));
    }
    PhaseFigures {
        mean_duration_s: mean,
        rank_bytes_per_sec: per_sec / ranks.max(1) as f64,
        bytes_per_sec: per_sec,
        durations_s,
        incomplete,
    }
}

/// A checkpoint job as it ran; `bytes` is what it had to move (every rank its shard).
fn checkpointed(j: &JobResult, bytes: u64) -> Checkpointed {
    let moved: u64 = j.ops.iter().map(|o| o.bytes).sum();
    let why = if j.interrupted {
        Some("interrupted".to_string())
    } else if !j.failures.is_empty() || j.total_errors() > 0 {
        Some("failed".to_string())
    } else if moved < bytes {
        Some(format!("{moved} of {bytes} bytes"))
    } else {
        None
    };
    Checkpointed { duration_ns: j.runtime_ns, bytes: moved, incomplete: why.map(|w| format!("{}: {w}", j.name)) }
}

/// The run's checkpoint jobs of a phase (their names end in `-write-N` or
/// `-read-N`), in order.
fn jobs(result: &RunResult, phase: &str, bytes: u64) -> Vec<Checkpointed> {
    let tag = format!("-{phase}-");
    result.jobs.iter().filter(|j| j.name.contains(&tag)).map(|j| checkpointed(j, bytes)).collect()
}

/// Writes `checkpoint.json` and prints the rules' figures (to standard
/// error when standard output carries a machine-readable format).
pub fn report(dir: &Path, result: &RunResult, preset: &str, plan: &CheckpointPlan, plain: bool) -> Result<(), CliError> {
    let whole = plan.shard * plan.ranks as u64;
    let n = CHECKPOINTS as usize;
    let (write, read) = (phase(plan.ranks, n, &jobs(result, "write", whole)), phase(plan.ranks, n, &jobs(result, "read", whole)));
    let f = CheckpointFigures {
        preset: preset.into(),
        mode: if plan.subset { "subset" } else { "default" },
        ranks: plan.ranks,
        rank_bytes: plan.shard,
        checkpoint_bytes: whole,
        valid: write.incomplete.is_empty() && read.incomplete.is_empty(),
        write,
        read,
    };
    for line in lines(preset, &f) {
        match plain {
            true => out!("{line}"),
            false => say!("{line}"),
        }
    }
    crate::output::write_text(dir, "checkpoint.json", &serde_json::to_string_pretty(&f).unwrap_or_default())
}

fn lines(preset: &str, f: &CheckpointFigures) -> Vec<String> {
    let mib = |b: f64| b / (1u64 << 20) as f64;
    let mut out = Vec::new();
    for (name, p) in [("write", &f.write), ("read", &f.read)] {
        let mut line = format!(
            "{preset} {name}: {} checkpoints of {:.1} MiB on {} ranks: {:.3} s each (the slowest rank's), {:.1} MiB/s a rank (the slowest's), {:.1} MiB/s in all",
            p.durations_s.len(),
            mib(f.checkpoint_bytes as f64),
            f.ranks,
            p.mean_duration_s,
            mib(p.rank_bytes_per_sec),
            mib(p.bytes_per_sec)
        );
        if !p.incomplete.is_empty() {
            line.push_str(&format!("; not counted: {}", p.incomplete.join(", ")));
        }
        out.push(line);
    }
    if !f.valid {
        out.push(format!("{preset}: INVALID under the rules: {CHECKPOINTS} checkpoints are written and {CHECKPOINTS} read whole"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(ns: u64, bytes: u64) -> Checkpointed {
        Checkpointed { duration_ns: ns, bytes, incomplete: None }
    }

    #[test]
    fn the_slowest_ranks_time_and_throughput_by_hand() {
        // 8 ranks of 7 MiB; checkpoints of 2 s and 4 s (the slowest rank's):
        // a mean of 3 s, 56 MiB x 2 / 6 s in all, a rank an eighth of it.
        let p = phase(8, 2, &[done(2_000_000_000, 56 << 20), done(4_000_000_000, 56 << 20)]);
        assert_eq!(p.durations_s, vec![2.0, 4.0]);
        assert_eq!(p.mean_duration_s, 3.0);
        assert!((p.rank_bytes_per_sec - 7340032.0 / 3.0).abs() < 1e-6);
        assert!((p.bytes_per_sec - 58720256.0 / 3.0).abs() < 1e-6);
        assert!(p.incomplete.is_empty());
        let none = phase(8, 10, &[]);
        assert_eq!(
            (none.bytes_per_sec, none.incomplete.clone()),
            (0.0, vec!["10 not run".to_string()]),
            "nothing ran: no figure, no division by zero"
        );
    }

    #[test]
    fn a_checkpoint_cut_short_is_named_and_left_out_of_the_figures() {
        // Two whole checkpoints of 16 MiB in 0.5 s each, then one interrupted
        // after 8 MiB in 0.25 s: the figures are the two's, 32 MiB / 1 s (not
        // 48 MiB over a mean of 0.417 s), and 7 were never run.
        let cut = Checkpointed { duration_ns: 250_000_000, bytes: 8 << 20, incomplete: Some("write-3: interrupted".into()) };
        let p = phase(8, 10, &[done(500_000_000, 16 << 20), done(500_000_000, 16 << 20), cut]);
        assert_eq!((p.durations_s.clone(), p.mean_duration_s), (vec![0.5, 0.5], 0.5));
        assert!((p.bytes_per_sec - (32u64 << 20) as f64).abs() < 1e-6, "{p:?}");
        assert!((p.rank_bytes_per_sec - (4u64 << 20) as f64).abs() < 1e-6, "{p:?}");
        assert_eq!(p.incomplete, vec!["write-3: interrupted".to_string(), "7 not run".to_string()]);
    }
}
