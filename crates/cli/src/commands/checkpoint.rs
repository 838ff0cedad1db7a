//! A checkpoint preset's figures as MLPerf Storage's rules report them
//! (mlcommons/storage, checkpointing/README.md): for each of the ten
//! checkpoints written and the ten read, its duration is the slowest
//! rank's (the job's time: every rank starts together) and its throughput
//! the slowest rank's (its shard over that time); `checkpoint.json` in the
//! results directory keeps them, with the means over the ten.

use crate::error::CliError;
use crate::sources::preset::CheckpointPlan;
use serde::Serialize;
use std::path::Path;
use storbench_model::RunResult;

/// One phase (the writes, or the reads) of the ten checkpoints.
#[derive(Debug, PartialEq, Serialize)]
pub struct PhaseFigures {
    /// Each checkpoint's duration, the slowest rank's, s.
    pub durations_s: Vec<f64>,
    pub mean_duration_s: f64,
    /// The slowest rank's throughput: a rank's bytes over the mean duration, bytes/s.
    pub rank_bytes_per_sec: f64,
    /// The whole checkpoint over the mean duration, bytes/s.
    pub bytes_per_sec: f64,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct CheckpointFigures {
    pub preset: String,
    pub mode: &'static str,
    pub ranks: u32,
    pub rank_bytes: u64,
    pub checkpoint_bytes: u64,
    pub write: PhaseFigures,
    pub read: PhaseFigures,
}

/// A phase's figures from each checkpoint's duration (ns).
pub fn phase(ranks: u32, rank_bytes: u64, durations_ns: &[u64]) -> PhaseFigures {
    let durations_s: Vec<f64> = durations_ns.iter().map(|d| *d as f64 / 1e9).collect();
    let mean = match durations_s.len() {
        0 => 0.0,
        n => durations_s.iter().sum::<f64>() / n as f64,
    };
    let per = |bytes: u64| if mean > 0.0 { bytes as f64 / mean } else { 0.0 };
    PhaseFigures { mean_duration_s: mean, rank_bytes_per_sec: per(rank_bytes), bytes_per_sec: per(rank_bytes * ranks as u64), durations_s }
}

/// The run's checkpoint jobs' durations, by phase (their names end in
/// `-write-N` or `-read-N`), in order.
fn durations(result: &RunResult, phase: &str) -> Vec<u64> {
    let tag = format!("-{phase}-");
    result.jobs.iter().filter(|j| j.name.contains(&tag)).map(|j| j.runtime_ns).collect()
}

/// Writes `checkpoint.json` and prints the rules' figures (to standard
/// error when standard output carries a machine-readable format).
pub fn report(dir: &Path, result: &RunResult, preset: &str, plan: &CheckpointPlan, plain: bool) -> Result<(), CliError> {
    let f = CheckpointFigures {
        preset: preset.into(),
        mode: if plan.subset { "subset" } else { "default" },
        ranks: plan.ranks,
        rank_bytes: plan.shard,
        checkpoint_bytes: plan.shard * plan.ranks as u64,
        write: phase(plan.ranks, plan.shard, &durations(result, "write")),
        read: phase(plan.ranks, plan.shard, &durations(result, "read")),
    };
    let mib = |b: f64| b / (1u64 << 20) as f64;
    for (name, p) in [("write", &f.write), ("read", &f.read)] {
        let line = format!(
            "{preset} {name}: {} checkpoints of {:.1} MiB on {} ranks: {:.3} s each (the slowest rank's), {:.1} MiB/s a rank (the slowest's), {:.1} MiB/s in all",
            p.durations_s.len(),
            mib(f.checkpoint_bytes as f64),
            f.ranks,
            p.mean_duration_s,
            mib(p.rank_bytes_per_sec),
            mib(p.bytes_per_sec)
        );
        match plain {
            true => out!("{line}"),
            false => say!("{line}"),
        }
    }
    let path = dir.join("checkpoint.json");
    std::fs::write(&path, serde_json::to_string_pretty(&f).unwrap_or_default())
        .map_err(|e| CliError::system(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_ranks_time_and_throughput_by_hand() {
        // 8 ranks of 7 MiB; checkpoints of 2 s and 4 s (the slowest rank's):
        // a mean of 3 s, 7 MiB / 3 s a rank, 56 MiB / 3 s in all.
        let p = phase(8, 7 << 20, &[2_000_000_000, 4_000_000_000]);
        assert_eq!(p.durations_s, vec![2.0, 4.0]);
        assert_eq!(p.mean_duration_s, 3.0);
        assert!((p.rank_bytes_per_sec - 7340032.0 / 3.0).abs() < 1e-6);
        assert!((p.bytes_per_sec - 58720256.0 / 3.0).abs() < 1e-6);
        assert_eq!(phase(8, 1, &[]).bytes_per_sec, 0.0, "nothing ran: no figure, no division by zero");
    }
}
