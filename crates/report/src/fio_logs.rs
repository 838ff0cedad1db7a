//! fio's averaged log files from a run's results: `write_bw_log`,
//! `write_iops_log` and `write_lat_log` with `log_avg_msec=N`, one file per
//! worker (fio's per-job logs), named and laid out as fio 3.33 writes them,
//! so fio's own tools (fio_generate_plots, fio2gnuplot, fiologparser) read
//! them: `PREFIX_TYPE.N.log`, N counting every worker of every job from 1;
//! lines `time_ms, value, ddir, 0, 0` (bs, and the priority column, are 0 in
//! averaged logs), a line per direction that saw I/O in the window.
//!
//! Values: bw in KiB/s and iops in I/O per second over each full window (fio
//! leaves the last, partial window out of these), lat and clat the mean
//! completion latency in ns (with the partial window). storbench has no
//! submission phase apart, so lat equals clat and the slat log is empty, as
//! fio's is for synchronous engines. Per-I/O logs (`log_avg_msec=0`) are not
//! made here: the workers stream them (the runner's `unit_log.rs`).

use storbench_metrics::plat::PLAT_NR;
use storbench_metrics::{HistSample, LogSample};
use storbench_model::{JobResult, RunResult};

/// One log file: its name (the prefix may hold a directory) and contents.
#[derive(Debug, PartialEq)]
pub struct LogFile {
    pub name: String,
    pub body: String,
}

/// Every log file the run's jobs asked for.
pub fn files(r: &RunResult) -> Vec<LogFile> {
    let mut out = Vec::new();
    let mut thread = 0u32;
    for j in &r.jobs {
        for w in 0..j.workers {
            thread += 1;
            let samples = j.logs.get(w as usize).map_or(&[][..], Vec::as_slice);
            out.extend(worker_files(j, thread, samples));
            if let Some(p) = &j.spec.logs.hist {
                let lines = j.hist_logs.get(w as usize).map_or(&[][..], Vec::as_slice);
                let prefix = if p.is_empty() { j.name.as_str() } else { p.as_str() };
                out.push(LogFile {
                    name: format!("{prefix}_clat_hist.{thread}.log"),
                    body: hist_lines(lines, j.spec.logs.hist_coarseness),
                });
            }
        }
    }
    out
}

fn worker_files(j: &JobResult, n: u32, samples: &[LogSample]) -> Vec<LogFile> {
    let logs = &j.spec.logs;
    if logs.per_io() {
        // Written line by line by the workers as the run went (the runner's unit_log.rs).
        return Vec::new();
    }
    let avg = logs.avg_msec as u64;
    let prefix = |p: &str| if p.is_empty() { j.name.clone() } else { p.to_string() };
    let full = |s: &&LogSample| s.window_ms >= avg;
    let mut out = Vec::new();
    let mut file = |p: &str, kind: &str, body: String| out.push(LogFile { name: format!("{}_{kind}.{n}.log", prefix(p)), body });
    if let Some(p) = &logs.bw {
        file(p, "bw", lines(samples.iter().filter(full), |s| s.bytes as f64 / 1024.0 * 1000.0 / s.window_ms as f64));
    }
    if let Some(p) = &logs.iops {
        file(p, "iops", lines(samples.iter().filter(full), |s| s.ios as f64 * 1000.0 / s.window_ms as f64));
    }
    if let Some(p) = &logs.lat {
        let mean = |s: &LogSample| s.lat_sum_ns as f64 / s.ios.max(1) as f64;
        file(p, "lat", lines(samples.iter(), mean));
        file(p, "clat", lines(samples.iter(), mean));
        file(p, "slat", String::new());
    }
    out
}

/// fio rounds a window's mean to the nearest integer: `(u64)(mean + 0.5)`.
fn lines<'a>(samples: impl Iterator<Item = &'a LogSample>, value: impl Fn(&LogSample) -> f64) -> String {
    samples.filter(|s| s.window_ms > 0).map(|s| format!("{}, {}, {}, 0, 0\n", s.t_ms, (value(s) + 0.5) as u64, s.dir)).collect()
}

/// fio's histogram log: `time_ms, ddir, bs` and 1856 >> C columns, column
/// k the sum of fio's buckets [k * 2^C, (k + 1) * 2^C).
fn hist_lines(lines: &[HistSample], coarseness: u8) -> String {
    let columns = PLAT_NR >> coarseness;
    let mut out = String::new();
    let mut row = vec![0u64; columns];
    for l in lines {
        row.iter_mut().for_each(|c| *c = 0);
        for (idx, count) in &l.bins {
            row[(*idx as usize >> coarseness).min(columns - 1)] += count;
        }
        out.push_str(&format!("{}, {}, {}", l.t_ms, l.dir, l.bs));
        for c in &row {
            out.push_str(", ");
            out.push_str(&c.to_string());
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_workload::apply_option;

    fn job(name: &str, workers: u32, opts: &[(&str, &str)], logs: Vec<Vec<LogSample>>) -> JobResult {
        let mut j = crate::fio::sample::job(name, 0, &[], 2_000_000_000, Vec::new());
        for (k, v) in opts {
            apply_option(&mut j.spec, k, v).unwrap();
        }
        j.workers = workers;
        j.logs = logs;
        j
    }

    fn sample(t_ms: u64, dir: u8, ios: u64, bytes: u64, lat_sum_ns: u64, window_ms: u64) -> LogSample {
        LogSample { t_ms, dir, ios, bytes, lat_sum_ns, window_ms }
    }

    #[test]
    fn names_count_workers_of_every_job_and_lines_are_fios() {
        let w0 = vec![
            sample(500, 0, 1000, 4_096_000, 50_000_000, 500),
            sample(500, 1, 10, 40960, 3_000_000, 500),
            sample(720, 0, 100, 409_600, 7_000_000, 220),
        ];
        let a = job("a", 2, &[("write_bw_log", ""), ("write_iops_log", "io"), ("log_avg_msec", "500")], vec![w0, Vec::new()]);
        let b = job("b", 1, &[("write_lat_log", "out/lat"), ("log_avg_msec", "500")], vec![vec![sample(500, 1, 4, 16384, 1_000_002, 500)]]);
        let r = RunResult { jobs: vec![a, b], ..crate::fio::sample::run() };
        let f = files(&r);
        let names: Vec<&str> = f.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["a_bw.1.log", "io_iops.1.log", "a_bw.2.log", "io_iops.2.log", "out/lat_lat.3.log", "out/lat_clat.3.log", "out/lat_slat.3.log"]
        );
        // 4,096,000 bytes in 500 ms = 8000 KiB/s; the partial window is left out.
        assert_eq!(f[0].body, "500, 8000, 0, 0, 0\n500, 80, 1, 0, 0\n");
        assert_eq!(f[1].body, "500, 2000, 0, 0, 0\n500, 20, 1, 0, 0\n");
        assert_eq!((f[2].body.as_str(), f[3].body.as_str()), ("", ""));
        // Mean latency, rounded as fio rounds: 1,000,002 / 4 = 250,000.5 -> 250,001.
        assert_eq!(f[4].body, "500, 250001, 1, 0, 0\n");
        assert_eq!((f[5].body.as_str(), f[6].body.as_str()), (f[4].body.as_str(), ""));
    }
}
