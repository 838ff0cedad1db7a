//! A/B comparison with the noise taken into account: for every job and
//! operation (and sweep point) the two sides have in common, IOPS, MiB/s
//! and latency percentiles, the relative difference with a 95% confidence
//! interval, and a verdict per metric.
//!
//! The interval comes from a bootstrap of each side's estimate. A side with
//! three runs or more (repeats) is resampled by run, which captures the
//! run-to-run noise; a side with one or two runs is resampled by blocks of
//! its per-second samples (a moving block bootstrap, blocks of about the
//! square root of the run's seconds, which keeps the seconds' correlation),
//! which only sees the noise within a run. Per-second samples have p50 and
//! p99 but not p99.9, so p99.9 gets an interval from repeats only. Within-run
//! noise understates the noise between runs, so a difference is only called
//! when its interval excludes zero *and* it is at least `min_effect` (2% by
//! default): two runs of the same job then come out "no difference".

use crate::fmt::{count, latency, mib_per_s};
use serde::Serialize;
use storbench_model::{JobResult, RunResult};
use storbench_workload::rng::Rng;
use storbench_workload::OpKind;

/// Replicates per bootstrap.
const REPLICATES: usize = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    MibPerSec,
    P50,
    P99,
    P999,
}

impl Metric {
    pub const ALL: [Metric; 5] = [Metric::Iops, Metric::MibPerSec, Metric::P50, Metric::P99, Metric::P999];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MibPerSec => "MiB/s",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
        }
    }

    /// Throughput: more is better; latency: less is.
    fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::MibPerSec)
    }

    /// The figure for people (IOPS count, MiB/s, latency).
    pub fn show(self, v: f64) -> String {
        match self {
            Metric::Iops => count(v),
            Metric::MibPerSec => mib_per_s(v * 1024.0 * 1024.0),
            _ => latency(v as u64),
        }
    }

    /// The run's own figure for one operation of a job.
    fn of_run(self, j: &JobResult, op: OpKind) -> Option<f64> {
        let o = j.op(op)?;
        Some(match self {
            Metric::Iops => o.iops,
            Metric::MibPerSec => o.bytes_per_sec / (1024.0 * 1024.0),
            Metric::P50 => o.latency.at(50.0) as f64,
            Metric::P99 => o.latency.at(99.0) as f64,
            Metric::P999 => o.latency.at(99.9) as f64,
        })
    }

    /// The measured seconds' values (none for p99.9).
    fn per_second(self, j: &JobResult, op: OpKind) -> Vec<f64> {
        let points = j.series.iter().filter(|p| !p.warmup && p.duration > 0.5);
        points
            .filter_map(|p| p.ops.iter().find(|s| s.op == op))
            .filter_map(|s| match self {
                Metric::Iops => Some(s.iops),
                Metric::MibPerSec => Some(s.bytes_per_sec / (1024.0 * 1024.0)),
                Metric::P50 => (s.p50_ns > 0).then_some(s.p50_ns as f64),
                Metric::P99 => (s.p99_ns > 0).then_some(s.p99_ns as f64),
                Metric::P999 => None,
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    NoDifference,
    /// Too few samples for an interval.
    Unknown,
}

impl Verdict {
    pub fn word(self, m: Metric) -> &'static str {
        match (self, m.higher_is_better()) {
            (Verdict::Better, true) => "faster",
            (Verdict::Better, false) => "lower (better)",
            (Verdict::Worse, true) => "slower",
            (Verdict::Worse, false) => "higher (worse)",
            (Verdict::NoDifference, _) => "no difference",
            (Verdict::Unknown, _) => "no interval",
        }
    }
}

/// One metric of one job/operation: both sides and their difference.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The sweep point's values (empty for runs).
    pub point: String,
    pub job: String,
    pub op: &'static str,
    pub metric: Metric,
    pub a: f64,
    pub b: f64,
    /// (b - a) / a, in percent.
    pub diff_pct: f64,
    /// 95% interval of the difference, in percent.
    pub ci_pct: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// One side of a comparison at one place: the runs there (repeats).
pub struct Side<'a> {
    pub runs: Vec<&'a RunResult>,
}

/// Settings of the judgement.
#[derive(Clone, Copy, Debug)]
pub struct Judge {
    /// A difference smaller than this (percent) is no difference.
    pub min_effect_pct: f64,
    pub seed: u64,
}

impl Default for Judge {
    fn default() -> Self {
        Judge { min_effect_pct: 2.0, seed: 0x5EED }
    }
}

/// Every metric of every job and operation both sides have.
pub fn compare(point: &str, a: &Side, b: &Side, judge: &Judge) -> Vec<Row> {
    let mut rows = Vec::new();
    let (Some(first_a), Some(first_b)) = (a.runs.first(), b.runs.first()) else { return rows };
    let single_job = first_a.jobs.len() == 1 && first_b.jobs.len() == 1;
    for ja in &first_a.jobs {
        // Jobs pair by name, or a lone job with a lone job.
        let Some(jb_name) = first_b.jobs.iter().find(|j| j.name == ja.name || single_job).map(|j| j.name.clone()) else { continue };
        for op in ja.ops.iter().map(|o| o.op).filter(|op| first_b.jobs.iter().any(|j| j.name == jb_name && j.op(*op).is_some())) {
            for m in Metric::ALL {
                let sa = samples(a, &ja.name, op, m);
                let sb = samples(b, &jb_name, op, m);
                if let (Some(sa), Some(sb)) = (sa, sb) {
                    rows.push(row(point, &ja.name, op, m, &sa, &sb, judge));
                }
            }
        }
    }
    rows
}

/// The job named `job`, or a run's lone job (it stands for the other side's
/// job whatever its name); a run of several jobs without it has none.
fn pick_job<'r>(r: &'r RunResult, job: &str) -> Option<&'r JobResult> {
    let lone = if r.jobs.len() == 1 { r.jobs.first() } else { None };
    r.jobs.iter().find(|j| j.name == job).or(lone)
}

/// A side's figure (the mean over its runs) and how to draw replicates.
struct Samples {
    estimate: f64,
    runs: Vec<f64>,
    seconds: Vec<Vec<f64>>,
}

fn samples(side: &Side, job: &str, op: OpKind, m: Metric) -> Option<Samples> {
    let jobs: Vec<&JobResult> = side.runs.iter().filter_map(|r| pick_job(r, job)).collect();
    let runs: Vec<f64> = jobs.iter().filter_map(|j| m.of_run(j, op)).collect();
    if runs.is_empty() {
        return None;
    }
    let estimate = runs.iter().sum::<f64>() / runs.len() as f64;
    let seconds = jobs.iter().map(|j| m.per_second(j, op)).collect();
    Some(Samples { estimate, runs, seconds })
}

impl Samples {
    /// Replicates of the estimate, or none when there is nothing to resample.
    fn replicates(&self, rng: &mut Rng) -> Option<Vec<f64>> {
        if self.runs.len() >= 3 {
            let k = self.runs.len() as u64;
            return Some((0..REPLICATES).map(|_| (0..k).map(|_| self.runs[rng.below(k) as usize]).sum::<f64>() / k as f64).collect());
        }
        // Each run's figure scaled by how its resampled seconds' mean moved.
        let usable: Vec<(f64, &Vec<f64>)> = self.runs.iter().copied().zip(&self.seconds).filter(|(_, s)| s.len() >= 4).collect();
        if usable.len() != self.runs.len() {
            return None;
        }
        let reps = (0..REPLICATES)
            .map(|_| {
                usable.iter().map(|(fig, secs)| fig * block_mean(secs, rng) / mean(secs).max(f64::MIN_POSITIVE)).sum::<f64>()
                    / usable.len() as f64
            })
            .collect();
        Some(reps)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The mean of a moving-block resample of `v` (blocks of about sqrt(n)).
fn block_mean(v: &[f64], rng: &mut Rng) -> f64 {
    let n = v.len();
    let block = (n as f64).sqrt().round().max(1.0) as usize;
    let starts = (n - block + 1) as u64;
    let (mut sum, mut taken) = (0.0, 0);
    while taken < n {
        let s = rng.below(starts) as usize;
        for x in &v[s..(s + block).min(s + n - taken)] {
            sum += x;
            taken += 1;
        }
    }
    sum / n as f64
}

fn row(point: &str, job: &str, op: OpKind, m: Metric, a: &Samples, b: &Samples, judge: &Judge) -> Row {
    let diff_pct = if a.estimate > 0.0 { (b.estimate / a.estimate - 1.0) * 100.0 } else { 0.0 };
    let mut rng = Rng::new(judge.seed);
    let ci_pct = match (a.replicates(&mut rng), b.replicates(&mut rng)) {
        (Some(ra), Some(rb)) => {
            let mut d: Vec<f64> = ra.iter().zip(&rb).filter(|(x, _)| **x > 0.0).map(|(x, y)| (y / x - 1.0) * 100.0).collect();
            d.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
            (d.len() >= REPLICATES / 2).then(|| (d[d.len() * 25 / 1000], d[d.len() * 975 / 1000]))
        }
        _ => None,
    };
    let verdict = match ci_pct {
        None => Verdict::Unknown,
        Some((lo, hi)) if (lo > 0.0 || hi < 0.0) && diff_pct.abs() >= judge.min_effect_pct => {
            if (diff_pct > 0.0) == m.higher_is_better() {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        Some(_) => Verdict::NoDifference,
    };
    Row { point: point.into(), job: job.into(), op: op.name(), metric: m, a: a.estimate, b: b.estimate, diff_pct, ci_pct, verdict }
}

impl Row {
    /// The row's cells: job, op, metric, A, B, diff, interval, verdict.
    pub fn cells(&self) -> Vec<String> {
        let ci = self.ci_pct.map_or("-".to_string(), |(lo, hi)| format!("[{lo:+.1}%, {hi:+.1}%]"));
        vec![
            self.job.clone(),
            self.op.to_string(),
            self.metric.name().to_string(),
            self.metric.show(self.a),
            self.metric.show(self.b),
            format!("{:+.1}%", self.diff_pct),
            ci,
            self.verdict.word(self.metric).to_string(),
        ]
    }
}

/// The table, plain (`markdown`: with pipes).
pub fn render(rows: &[Row], names: (&str, &str), markdown: bool) -> String {
    let with_point = rows.iter().any(|r| !r.point.is_empty());
    let mut head = vec!["job", "op", "metric", names.0, names.1, "diff", "95% CI", "verdict"];
    if with_point {
        head.insert(0, "point");
    }
    let mut table: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        let mut cells = r.cells();
        if with_point {
            cells.insert(0, r.point.clone());
        }
        table.push(cells);
    }
    if markdown {
        let mut out = String::new();
        for (i, r) in table.iter().enumerate() {
            out += &format!("| {} |\n", r.join(" | "));
            if i == 0 {
                out += &format!("|{}\n", r.iter().map(|_| "---|").collect::<String>());
            }
        }
        return out;
    }
    let widths = crate::fmt::column_widths(&table);
    table
        .iter()
        .map(|r| {
            r.iter().enumerate().map(|(c, s)| crate::fmt::pad_right(s, widths[c])).collect::<Vec<_>>().join("  ").trim_end().to_string()
                + "\n"
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_means_of_a_constant_are_the_constant_and_vary_with_noise() {
        let mut rng = Rng::new(1);
        assert_eq!(block_mean(&[5.0; 10], &mut rng), 5.0);
        let noisy: Vec<f64> = (0..30).map(|i| if i % 2 == 0 { 90.0 } else { 110.0 }).collect();
        let ms: Vec<f64> = (0..200).map(|_| block_mean(&noisy, &mut rng)).collect();
        assert!(ms.iter().any(|m| *m != 100.0) && ms.iter().all(|m| (90.0..=110.0).contains(m)));
    }

    #[test]
    fn verdicts_need_an_interval_clear_of_zero_and_a_large_enough_effect() {
        let side = |base: f64, noise: f64| Samples {
            estimate: base,
            runs: vec![base],
            seconds: vec![(0..20).map(|i| base + if i % 2 == 0 { noise } else { -noise }).collect()],
        };
        let j = Judge::default();
        let r = row("", "j", OpKind::Read, Metric::Iops, &side(1000.0, 50.0), &side(1300.0, 50.0), &j);
        assert_eq!(r.verdict, Verdict::Better, "{r:?}");
        let r = row("", "j", OpKind::Read, Metric::P99, &side(1000.0, 50.0), &side(1300.0, 50.0), &j);
        assert_eq!(r.verdict, Verdict::Worse, "higher latency is worse");
        let r = row("", "j", OpKind::Read, Metric::Iops, &side(1000.0, 50.0), &side(1010.0, 50.0), &j);
        assert_eq!(r.verdict, Verdict::NoDifference, "{r:?}");
        let r = row("", "j", OpKind::Read, Metric::P999, &Samples { seconds: vec![vec![]], ..side(1.0, 0.0) }, &side(2.0, 0.0), &j);
        assert_eq!(r.verdict, Verdict::Unknown);
    }
}
