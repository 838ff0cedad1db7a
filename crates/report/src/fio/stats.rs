//! The numbers fio 3.33 reports, computed from a storbench run the way fio
//! computes them (stat.c). A storbench job of N workers with
//! `group_reporting` is one fio entry with `jobs=N`; without it, each worker
//! is an entry of its own (fio's clones), as fio lists them. Reads and writes are fio's
//! `read` and `write`, fsyncs are `sync`, and the object operations (create,
//! update, stat, delete, list) have no place in fio's output and are left out.
//! A job's verify pass (measured apart, `JobResult::phases`) is in its reads,
//! as fio counts it: its reads and its time added to the read direction's.

use std::collections::BTreeMap;
use storbench_metrics::{LatencyHistogram, STANDARD_PERCENTILES};
use storbench_model::{DiskUtil, JobResult, Phase, RunResult};
use storbench_workload::OpKind;

pub use super::entries::{entries, reporting_groups, Entry};
use super::plat::Plat;

/// What tools check the `fio version` for (a `fio-` prefix, 3.x).
pub const FIO_VERSION: &str = "fio-3.33";

/// The keys of fio's latency maps: ns and us (`latency_ns`, `latency_us`) ...
pub const LAT_KEYS: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
/// ... and ms (`latency_ms`).
pub const LAT_MS_KEYS: [&str; 12] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];
/// The keys of `iodepth_level`.
pub const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// The keys of `iodepth_submit` and `iodepth_complete`.
pub const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// One latency statistic (fio's `io_stat` plus its histogram).
pub struct Lat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation (n-1), as fio's `calc_lat`.
    pub dev: f64,
    pub plat: Plat,
}

impl Lat {
    /// From storbench's histogram: min/max are the histogram's (within 0.1%),
    /// fio's are exact; the fio buckets are exact (see `plat`).
    pub fn of(h: &LatencyHistogram) -> Lat {
        let n = h.count();
        if n == 0 {
            return Lat { n, min: 0, max: 0, mean: 0.0, dev: 0.0, plat: Plat::of(h) };
        }
        let dev = if n > 1 { h.stdev() * (n as f64 / (n - 1) as f64).sqrt() } else { 0.0 };
        Lat { n, min: h.min(), max: h.max(), mean: h.mean(), dev, plat: Plat::of(h) }
    }

    pub fn empty() -> Lat {
        Lat::of(&LatencyHistogram::new())
    }

    /// The default percentile list's values, as fio computes them.
    pub fn percentiles(&self) -> Vec<u64> {
        self.plat.percentiles(&STANDARD_PERCENTILES)
    }
}

/// Rate samples (fio's bw/iops `io_stat`): min, max, mean, n-1 deviation.
#[derive(Clone, Copy, Default)]
pub struct Samples {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
}

impl Samples {
    pub fn of(values: &[u64]) -> Samples {
        let n = values.len() as u64;
        if n == 0 {
            return Samples::default();
        }
        let mean = values.iter().map(|v| *v as f64).sum::<f64>() / n as f64;
        let s: f64 = values.iter().map(|v| (*v as f64 - mean).powi(2)).sum();
        let dev = if n > 1 { (s / (n - 1) as f64).sqrt() } else { 0.0 };
        let min = values.iter().copied().min().unwrap_or(0);
        let max = values.iter().copied().max().unwrap_or(0);
        Samples { n, min, max, mean, dev }
    }

    /// fio's `sum_stat` with `pure_sum` (a group's bw and iops): another
    /// member's samples added field by field, its squared deviations too.
    pub fn sum(&mut self, o: &Samples) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let squares = |s: &Samples| s.dev * s.dev * s.n.saturating_sub(1) as f64;
        let total = squares(self) + squares(o);
        (self.n, self.min, self.max, self.mean) = (self.n + o.n, self.min + o.min, self.max + o.max, self.mean + o.mean);
        self.dev = if self.n > 1 { (total / (self.n - 1) as f64).sqrt() } else { 0.0 };
    }
}

/// Linux's ETIMEDOUT, fio's error for a job its latency bounds ended.
const ETIMEDOUT: u64 = 110;
/// One direction (read or write) of a job.
pub struct Dir {
    pub io_bytes: u64,
    pub runtime_ms: u64,
    /// Issued I/Os: completed ones and failed ones, as fio counts them.
    pub total_ios: u64,
    pub short_ios: u64,
    /// fio's slat: issue to submission, for engines that submit apart
    /// (libaio); empty otherwise, as fio's for synchronous engines.
    pub slat: Lat,
    /// To completion from the submission: the service time (of fixed-rate
    /// runs and engines that submit apart), else the latency.
    pub clat: Lat,
    /// storbench's latency (from the intended start in fixed-rate runs).
    pub lat: Lat,
    /// KiB/s per second of the run, truncated to integers as fio's samples are.
    pub bw: Samples,
    pub iops: Samples,
    /// Completion latency per I/O priority carried (class, level), the
    /// job's own first; fio shows them when two or more have samples.
    pub prios: Vec<(u8, u8, Lat)>,
}

impl Dir {
    pub fn empty() -> Dir {
        Dir {
            io_bytes: 0,
            runtime_ms: 0,
            total_ios: 0,
            short_ios: 0,
            slat: Lat::empty(),
            clat: Lat::empty(),
            lat: Lat::empty(),
            bw: Samples::default(),
            iops: Samples::default(),
            prios: Vec::new(),
        }
    }

    /// fio's `get_nr_prios_with_samples(...) >= 2`: the per-priority figures
    /// it prints, else none.
    pub fn shown_prios(&self) -> &[(u8, u8, Lat)] {
        if self.prios.len() >= 2 {
            &self.prios
        } else {
            &[]
        }
    }

    /// fio's direction `d` (0 read, 1 write, 2 trim) of an entry's members:
    /// the operations each member's `directions` put there (object jobs'
    /// creates and updates are writes (PUTs) and their deletes trims, as
    /// under fio's http engine), with each one's verify pass's operations of
    /// the direction. As fio's `sum_thread_stats`: counts and histograms
    /// added, the longest runtime, rate samples summed.
    fn of(parts: &[&JobResult], d: usize) -> Dir {
        let mut out = Dir::empty();
        let (mut clat, mut lat, mut slat, mut runtime_ns) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new(), 0);
        let (mut seen, mut by_prio) = (false, Vec::new());
        for j in parts {
            let ops = directions(j)[d];
            let pass = j.phase(Phase::Verify);
            let main: Vec<_> = j.ops.iter().filter(|o| ops.contains(&o.op)).collect();
            let passed: Vec<_> = pass.iter().flat_map(|p| &p.ops).filter(|o| ops.contains(&o.op)).collect();
            if main.is_empty() && passed.is_empty() {
                continue;
            }
            seen = true;
            let own = if main.is_empty() || !in_pattern(j, ops) { 0 } else { j.runtime_ns };
            runtime_ns = runtime_ns.max(own + pass.filter(|_| !passed.is_empty()).map_or(0, |p| p.runtime_ns));
            for o in main.iter().chain(&passed) {
                clat.add(o.service_histogram.as_ref().unwrap_or(&o.histogram));
                lat.add(&o.histogram);
                if let Some(s) = &o.submit_histogram {
                    slat.add(s);
                }
                out.io_bytes += o.bytes;
                out.total_ios += o.ios + o.errors.values().sum::<u64>();
                out.short_ios += o.errors.get("short I/O").copied().unwrap_or(0);
            }
            let (bw, iops) = rate_samples(j, ops);
            out.bw.sum(&bw);
            out.iops.sum(&iops);
            add_prios(&mut by_prio, prios(j, ops));
        }
        if !seen {
            return out;
        }
        // backend.c update_runtime: whole microseconds, rounded up to ms (a job that did I/O took at least 1 ms).
        out.runtime_ms = (runtime_ns / 1000).div_ceil(1000);
        (out.slat, out.clat, out.lat) = (Lat::of(&slat), Lat::of(&clat), Lat::of(&lat));
        out.prios = by_prio.iter().map(|(c, l, h)| (*c, *l, Lat::of(h))).collect();
        out
    }

    /// B/s, integer: `1000 * io_bytes / runtime_ms`.
    pub fn bw_bytes(&self) -> u64 {
        per_ms(self.io_bytes, self.runtime_ms)
    }

    /// IO/s as the JSON prints it.
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            1000.0 * self.total_ios as f64 / self.runtime_ms as f64
        }
    }

    /// IO/s as terse and normal output print it (integer).
    pub fn iops_int(&self) -> u64 {
        per_ms(self.total_ios, self.runtime_ms)
    }
}

/// Whether the job's pattern has the direction: fio adds the measured
/// phase's time to a direction only then (backend.c: `td_read(td) &&
/// io_bytes[DDIR_READ]`), so the reads a write job makes to verify
/// (verify_backlog) count the verify pass's time alone.
fn in_pattern(j: &JobResult, ops: &[OpKind]) -> bool {
    ops != READS || j.spec.objects.is_some() || j.spec.kind.meta().is_some() || j.spec.read_percent() > 0.0
}

/// `1000 * n / ms` in integers, 0 for no time.
fn per_ms(n: u64, ms: u64) -> u64 {
    if ms == 0 {
        0
    } else {
        (1000 * n as u128 / ms as u128).min(u64::MAX as u128) as u64
    }
}

const READS: &[OpKind] = &[OpKind::Read];
const WRITES: &[OpKind] = &[OpKind::Write, OpKind::Create, OpKind::Update];
const TRIMS: &[OpKind] = &[OpKind::Delete, OpKind::Trim];

/// The operations of each of fio's directions (read, write, trim) for this
/// job. fio's metadata engines put their creates, stats and deletes in the
/// read direction when the job's pattern reads (the default) and in the
/// write direction otherwise (engines/fileoperations.c); ftruncate's
/// truncates are writes.
fn directions(j: &JobResult) -> [&'static [OpKind]; 3] {
    const NONE: &[OpKind] = &[];
    match j.spec.kind.meta() {
        Some(OpKind::Truncate) => [NONE, &[OpKind::Truncate], NONE],
        Some(_) if j.spec.read_percent() > 0.0 => [&[OpKind::Create, OpKind::Stat, OpKind::Delete], NONE, NONE],
        Some(_) => [NONE, &[OpKind::Create, OpKind::Stat, OpKind::Delete], NONE],
        None => [READS, WRITES, TRIMS],
    }
}

/// The completion latency of the direction made of `ops` per priority that
/// any of its I/Os carried.
fn prios(j: &JobResult, ops: &[OpKind]) -> Vec<(u8, u8, LatencyHistogram)> {
    let mut out = Vec::new();
    for p in &j.priorities {
        let mut clat = LatencyHistogram::new();
        for o in p.ops.iter().filter(|o| ops.contains(&o.op)) {
            clat.add(o.service_histogram.as_ref().unwrap_or(&o.histogram));
        }
        if clat.count() > 0 {
            out.push((p.class, p.level, clat));
        }
    }
    out
}

/// Another member's per-priority latencies added to the entry's, the first
/// member's order kept.
fn add_prios(into: &mut Vec<(u8, u8, LatencyHistogram)>, from: Vec<(u8, u8, LatencyHistogram)>) {
    for (c, l, h) in from {
        match into.iter_mut().find(|(ic, il, _)| (*ic, *il) == (c, l)) {
            Some((_, _, mine)) => mine.add(&h),
            None => into.push((c, l, h)),
        }
    }
}

/// A member's per-second rate samples of the direction: KiB/s and IO/s,
/// truncated to integers as fio's samples are.
fn rate_samples(j: &JobResult, ops: &[OpKind]) -> (Samples, Samples) {
    let points: Vec<(f64, f64)> = j
        .series
        .iter()
        .filter(|p| !p.warmup && p.duration > 0.5)
        .filter(|p| p.ops.iter().any(|s| ops.contains(&s.op)))
        .map(|p| p.ops.iter().filter(|s| ops.contains(&s.op)).fold((0.0, 0.0), |(b, i), s| (b + s.bytes_per_sec, i + s.iops)))
        .collect();
    let bw: Vec<u64> = points.iter().map(|s| (s.0 / 1024.0) as u64).collect();
    let iops: Vec<u64> = points.iter().map(|s| s.1 as u64).collect();
    (Samples::of(&bw), Samples::of(&iops))
}

/// One job as a fio group_reporting entry.
pub struct Job<'a> {
    /// The entry's settings (its first member's) and added counts.
    pub r: &'a JobResult,
    /// The members whose figures are added (the job alone, or a reporting group's).
    parts: Vec<&'a JobResult>,
    pub read: Dir,
    pub write: Dir,
    /// Trims: block trims (rw=trim, randtrim) and object deletes (fio's http engine trims).
    pub trim: Dir,
    pub sync: Lat,
    pub sync_ios: u64,
    /// Read and write completions in fio's latency buckets (`io_u_lat_n/u/m`).
    pub lat_ns: [u64; 10],
    pub lat_us: [u64; 10],
    pub lat_ms: [u64; 12],
}

impl<'a> Job<'a> {
    /// fio's latency line: the job's `latency_target` (ns), `latency_window`
    /// (us, as fio keeps it) and `latency_percentile`; fio's 0, 0 and 100
    /// for a job without one. The depth beside them is the job's.
    pub fn latency_target(&self) -> (u64, u64, f64) {
        match self.r.spec.latency_target {
            Some(t) => (t.target_ns, t.window_ns.unwrap_or(0) / 1000, t.percentile),
            None => (0, 0, 100.0),
        }
    }

    /// One job alone (the outputs take entries; the tests single jobs).
    #[cfg(test)]
    pub fn of(j: &'a JobResult) -> Job<'a> {
        Job::merged(j, vec![j])
    }

    /// An entry of fio's outputs (see `entries`): its members' figures.
    pub fn of_entry(e: &'a Entry<'a>) -> Job<'a> {
        Job::merged(&e.r, e.parts.iter().map(|p| p.as_ref()).collect())
    }

    fn merged(r: &'a JobResult, parts: Vec<&'a JobResult>) -> Job<'a> {
        let mut clat = LatencyHistogram::new();
        let (mut sync, mut sync_ios) = (LatencyHistogram::new(), 0);
        for j in &parts {
            let [reads, writes, _] = directions(j);
            let passed = j.phase(Phase::Verify).into_iter().flat_map(|p| &p.ops);
            for o in j.ops.iter().chain(passed).filter(|o| reads.contains(&o.op) || writes.contains(&o.op)) {
                clat.add(o.service_histogram.as_ref().unwrap_or(&o.histogram));
            }
            if let Some(o) = j.op(OpKind::Sync) {
                sync.add(&o.histogram);
                sync_ios += o.ios;
            }
        }
        let (lat_ns, lat_us, lat_ms) = latency_buckets(&clat);
        let (mut read, mut write) = (Dir::of(&parts, 0), Dir::of(&parts, 1));
        if matches!(r.spec.kind.meta(), Some(OpKind::Create | OpKind::Stat | OpKind::Delete)) {
            // fio samples only their completion latency (add_clat_sample), no total latency.
            (read.lat, write.lat) = (Lat::empty(), Lat::empty());
        }
        Job { r, trim: Dir::of(&parts, 2), parts, read, write, sync: Lat::of(&sync), sync_ios, lat_ns, lat_us, lat_ms }
    }

    pub fn dirs(&self) -> [&Dir; 2] {
        [&self.read, &self.write]
    }

    /// fio's `ddir_rw_sum(total_io_u)`: the denominator of every share below.
    pub fn rw_ios(&self) -> u64 {
        self.read.total_ios + self.write.total_ios
    }

    /// fio's `error`: storbench keeps no errno of the first failure, so any
    /// failure or failed I/O is EIO (5), but for fio's latency bounds'
    /// ETIMEDOUT (110).
    pub fn error(&self) -> u64 {
        let late = |f: &String| f.contains(storbench_model::FIO_LATENCY_EXCEEDED);
        match self.r.failures.first() {
            Some(f) if late(f) => ETIMEDOUT,
            _ if self.r.failures.is_empty() && self.r.total_errors() == 0 => 0,
            _ => 5,
        }
    }

    /// What went wrong, for the normal output's `err= 5 (...)`.
    pub fn verror(&self) -> String {
        let first_error = || self.r.ops.iter().flat_map(|o| o.errors.keys()).next().cloned();
        self.r.failures.first().cloned().or_else(first_error).unwrap_or_default()
    }

    /// fio's `desc`: a description given to the job. The summary storbench
    /// makes up for every job ("randread 4KiB qd1 x1 psync") is not one: fio
    /// prints `desc` (and the terse field, and the normal output's line) only
    /// for a job file's `description=`.
    pub fn description(&self) -> &str {
        if self.r.description == self.r.spec.describe() {
            ""
        } else {
            &self.r.description
        }
    }

    /// `elapsed`: seconds of the job (ramp and verify pass included),
    /// rounded up as fio does.
    pub fn elapsed_s(&self) -> u64 {
        let ms = |j: &&JobResult| (j.ramp_ns + j.runtime_ns + j.pass_ns()) / 1_000_000;
        self.parts.iter().map(ms).max().unwrap_or(0).div_ceil(1000)
    }

    /// `job_runtime`: fio adds up the runtimes of a group's members (each
    /// one's time since its start: its verify pass included).
    pub fn job_runtime_ms(&self) -> u64 {
        let ms = |j: &&JobResult| (j.runtime_ns + j.pass_ns()) / 1_000_000 * j.workers.max(1) as u64;
        self.parts.iter().map(ms).sum()
    }

    /// `usr_cpu`, `sys_cpu`: CPU ms over the summed runtime, i.e. per worker.
    pub fn cpu(&self) -> (f64, f64) {
        let runtime = self.job_runtime_ms();
        let pct = |ns: u64| if runtime == 0 { 0.0 } else { (ns / 1_000_000) as f64 * 100.0 / runtime as f64 };
        (pct(self.r.worker_cpu.user_ns), pct(self.r.worker_cpu.sys_ns))
    }

    /// `iodepth_level`: the members' I/Os by the depth in flight once issued
    /// (`JobResult::depths`, fio's io_u_map), as shares of those counted (the
    /// measured phase's: a verify pass is not). Results from before
    /// storbench counted them put every I/O in the bucket of the job's queue
    /// depth, exact for depth 1 and a full queue.
    pub fn depth_level(&self) -> [f64; 7] {
        let mut map = [0; 7];
        for j in &self.parts {
            map.iter_mut().zip(&j.depths).for_each(|(a, b)| *a += b);
        }
        if map.iter().all(|n| *n == 0) {
            map[storbench_metrics::interval::depth_level(self.r.queue_depth as usize)] = self.rw_ios();
        }
        distribution(&map, map.iter().sum())
    }

    /// `iodepth_submit` and `iodepth_complete`: storbench's workers submit
    /// and reap one I/O at a time, which fio counts in the "4" (1-4) bucket.
    pub fn batches(&self) -> [f64; 7] {
        let mut map = [0; 7];
        map[1] = self.rw_ios();
        distribution(&map, self.rw_ios())
    }

    /// `latency_ns`, `latency_us`, `latency_ms` as percentages.
    pub fn latency_shares(&self) -> ([f64; 10], [f64; 10], [f64; 12]) {
        let total = self.rw_ios();
        (self.lat_ns.map(|c| share(c, total)), self.lat_us.map(|c| share(c, total)), self.lat_ms.map(|c| share(c, total)))
    }
}

/// fio's `stat_calc_dist`: percentages of `total`, a nonzero one at least 0.1.
pub fn distribution(map: &[u64; 7], total: u64) -> [f64; 7] {
    map.map(|c| floored_share(c, total, 0.1))
}

/// fio's `stat_calc_lat`: a percentage of `total`, a nonzero one at least 0.01.
pub fn share(c: u64, total: u64) -> f64 {
    floored_share(c, total, 0.01)
}

/// `c` as a percentage of `total`; a count that is not zero shows as at least `floor`.
fn floored_share(c: u64, total: u64, floor: f64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let v = c as f64 / total as f64 * 100.0;
    if v < floor && c > 0 {
        floor
    } else {
        v
    }
}

/// fio's `io_u_mark_latency` buckets, [lower key, key) in truncated units:
/// ns [0,2) .. [750,1000); us [1,2) .. [750,1000); ms [1,2) .. [1000,2000), >=2000.
fn latency_buckets(h: &LatencyHistogram) -> ([u64; 10], [u64; 10], [u64; 12]) {
    let below = |x: u64| count_below(h, x);
    let unit = |unit: u64| {
        let mut low = if unit == 1 { 0 } else { unit };
        [2u64, 4, 10, 20, 50, 100, 250, 500, 750, 1000].map(|k| {
            let high = k * unit;
            let c = below(high) - below(low);
            low = high;
            c
        })
    };
    let ms = unit(1_000_000);
    let mut lat_ms = [0; 12];
    lat_ms[..10].copy_from_slice(&ms);
    lat_ms[10] = below(2_000_000_000) - below(1_000_000_000);
    lat_ms[11] = h.count() - below(2_000_000_000);
    (unit(1), unit(1_000), lat_ms)
}

/// Latencies below `x` ns. A histogram bucket (exact below 2048 ns, else
/// 1/1024 of its power of two wide) that holds `x` counts as below it when its
/// middle (the value the histogram's mean uses) is: a latency within 0.1% of
/// a bucket key can land on the other side of it.
pub fn count_below(h: &LatencyHistogram, x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let width = if x < 2048 { 1 } else { 1u64 << (63 - x.leading_zeros() - 10) };
    let low = x - x % width;
    if low + width / 2 < x {
        h.count_between(0, x)
    } else if low == 0 {
        0
    } else {
        h.count_between(0, low - 1)
    }
}

/// fio's `group_run_stats` for one direction of a reporting group.
#[derive(Clone, Copy, Default)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// B/s of the whole group: its bytes over its longest runtime.
    pub agg: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run: u64,
    pub max_run: u64,
}

impl GroupDir {
    fn add(&mut self, d: &Dir) {
        if d.runtime_ms == 0 {
            return;
        }
        let first = self.max_run == 0;
        self.min_run = if first { d.runtime_ms } else { self.min_run.min(d.runtime_ms) };
        self.max_run = self.max_run.max(d.runtime_ms);
        let bw = d.bw_bytes();
        self.min_bw = if first { bw } else { self.min_bw.min(bw) };
        self.max_bw = self.max_bw.max(bw);
        self.io_bytes += d.io_bytes;
        self.agg = per_ms(self.io_bytes, self.max_run);
    }

    /// The JSON's `bw_agg` and the normal output's `per=`: the job's mean
    /// bandwidth (truncated) as a share of the group's; 0 without samples.
    pub fn share_json(&self, bw: &Samples) -> f64 {
        if bw.n == 0 {
            return 0.0;
        }
        if self.agg <= 1024 {
            return 100.0;
        }
        ((bw.mean as u64) as f64 * 100.0 / (self.agg as f64 / 1024.0)).min(100.0)
    }

    /// The terse output's bw_agg: the same, with fio's other rounding there.
    pub fn share_terse(&self, bw: &Samples) -> f64 {
        if bw.n == 0 {
            return 0.0;
        }
        if self.agg == 0 {
            return 100.0;
        }
        (bw.mean * 100.0 / (self.agg / 1024) as f64).min(100.0)
    }
}

/// A reporting group: the jobs of one storbench group.
#[derive(Clone, Copy, Default)]
pub struct Group {
    pub id: u32,
    pub dirs: [GroupDir; 2],
}

/// The groups of a run's jobs, by id.
pub fn groups(jobs: &[Job]) -> BTreeMap<u32, Group> {
    let mut out: BTreeMap<u32, Group> = BTreeMap::new();
    for j in jobs {
        let g = out.entry(j.r.group).or_insert(Group { id: j.r.group, ..Group::default() });
        for (gd, d) in g.dirs.iter_mut().zip(j.dirs()) {
            gd.add(d);
        }
    }
    out
}

/// When the run ended (fio reports that time), in unix ms: the start plus
/// each group's longest job, the groups one after another. The start has
/// second resolution and set-up time is not counted.
pub fn end_ms(r: &RunResult) -> u64 {
    let mut longest: BTreeMap<u32, u64> = BTreeMap::new();
    for j in &r.jobs {
        let ms = (j.ramp_ns + j.runtime_ns + j.pass_ns()) / 1_000_000;
        let e = longest.entry(j.group).or_default();
        *e = (*e).max(ms);
    }
    r.started_unix * 1000 + longest.values().sum::<u64>()
}

/// A disk's `util` as fio prints it: percent busy, capped at 100 as fio caps
/// it, and 0 for a value that is not a number (fio prints 0 when no time
/// passed).
pub fn disk_util(d: &DiskUtil) -> f64 {
    if d.util.is_finite() {
        d.util.clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// fio's rw names (`ddir_str`): `readwrite` is `rw`.
pub fn rw_name(j: &JobResult) -> &'static str {
    match j.spec.rw.name() {
        "readwrite" => "rw",
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;
    use storbench_model::PhaseResult;

    fn read_job(lats: &[(u64, u64)]) -> JobResult {
        let s = 1_000_000_000;
        sample::job("t", 0, &[("rw", "randread")], s, vec![sample::op(OpKind::Read, lats, 4096, s)])
    }

    #[test]
    fn the_histogram_geometry_count_below_relies_on_holds() {
        assert_eq!(storbench_metrics::hist::SIGNIFICANT_DIGITS, 3);
        // 2_000_000 is in the bucket 1_999_872..=2_000_895 (width 1024).
        let mut h = LatencyHistogram::new();
        h.record(2_000_000);
        assert_eq!((h.count_between(1_999_872, 1_999_872), h.count_between(1_999_871, 1_999_871)), (1, 0));
        assert_eq!(h.count_between(2_000_895, 2_000_895), 1);
        assert_eq!(h.count_between(2_000_896, 2_000_896), 0);
        // Its middle (2_000_384) is above 2 ms: it is not below 2 ms, and is below 2.0004 ms.
        assert_eq!((count_below(&h, 2_000_000), count_below(&h, 2_000_385)), (0, 1));
        assert_eq!((count_below(&h, 1_999_872), count_below(&h, 1_000_000)), (0, 0));
    }

    #[test]
    fn latency_buckets_are_fios_half_open_ranges() {
        let lats =
            [1, 999, 1000, 1999, 2000, 50_000, 999_000, 1_000_000, 1_999_000, 2_000_000, 1_999_000_000, 2_000_000_000, 3_600_000_000_000];
        let r = read_job(&lats.map(|v| (v, 1)));
        let j = Job::of(&r);
        assert_eq!(j.lat_ns, [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(j.lat_us, [2, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(j.lat_ms, [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
        let (_, us, ms) = j.latency_shares();
        assert_eq!((us[0], ms[11]), (2.0 / 13.0 * 100.0, 2.0 / 13.0 * 100.0));
    }

    #[test]
    fn only_reads_and_writes_count_in_the_buckets() {
        let s = 1_000_000_000;
        let ops = vec![sample::op(OpKind::Write, &[(30_000, 3)], 4096, s), sample::op(OpKind::Sync, &[(30_000, 5)], 0, s)];
        let r = sample::job("w", 0, &[("rw", "write")], s, ops);
        let j = Job::of(&r);
        assert_eq!(j.lat_us[4], 3);
        assert_eq!(j.latency_shares().1[4], 100.0);
        assert_eq!((j.sync_ios, j.sync.n), (5, 5));
    }

    #[test]
    fn stddev_is_the_sample_deviation() {
        let r = read_job(&[(100, 1), (200, 1), (300, 1)]);
        let j = Job::of(&r);
        assert_eq!((j.read.clat.mean, j.read.clat.dev), (200.0, 100.0));
        let s = Samples::of(&[1920, 2080]);
        assert_eq!((s.n, s.min, s.max, s.mean), (2, 1920, 2080, 2000.0));
        assert!((s.dev - 113.137085).abs() < 1e-6, "{}", s.dev);
        assert_eq!(Samples::of(&[7]).dev, 0.0);
    }

    #[test]
    fn small_shares_are_floored_as_fio_floors_them() {
        assert_eq!((share(1, 100_000), share(0, 100_000), share(3, 0)), (0.01, 0.0, 0.0));
        assert_eq!(distribution(&[1, 0, 1999, 0, 0, 0, 0], 2000), [0.1, 0.0, 99.95, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn a_job_is_a_group_reporting_entry() {
        let r = sample::run();
        let jobs: Vec<Job> = r.jobs.iter().map(Job::of).collect();
        // 2 workers x 2000 ms; 100 ms user and 500 ms system CPU in all.
        assert_eq!((jobs[0].job_runtime_ms(), jobs[0].cpu()), (4000, (2.5, 12.5)));
        assert_eq!(jobs[0].depth_level(), [100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(jobs[2].depth_level(), [0.0, 0.0, 0.0, 0.0, 100.0, 0.0, 0.0]);
        assert_eq!(jobs[2].batches(), [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // The two failed writes were issued: fio counts them.
        assert_eq!((jobs[2].write.total_ios, jobs[2].write.iops(), jobs[2].error()), (502, 502.0, 5));
        assert_eq!(jobs[2].verror(), "ENOSPC (No space left on device)");
        assert_eq!((jobs[0].read.bw_bytes(), jobs[0].read.iops_int()), (2_048_000, 500));
        // Only a description of the job's own is fio's `desc`.
        assert_eq!((jobs[0].description(), jobs[2].description()), ("", "beta job"));
        let mut rr = r.jobs[0].clone();
        rr.description = rr.spec.describe();
        assert_eq!((rr.description.as_str(), Job::of(&rr).description()), ("randread 4KiB qd1 x2 psync", ""));
    }

    /// A write job of 1000 writes in 2 s whose verify pass read them back
    /// in 500 ms; with `backlog`, 200 of its reads came during the writes.
    fn verified_write(rw: &str, backlog: bool) -> JobResult {
        let s = 1_000_000_000;
        let mut ops = vec![sample::op(OpKind::Write, &[(40_000, 1000)], 4096, 2 * s)];
        if backlog {
            ops.push(sample::op(OpKind::Read, &[(10_000, 200)], 4096, 2 * s));
        }
        let mut r = sample::job("wv", 0, &[("rw", rw), ("verify", "crc32c")], 2 * s, ops);
        let reads = vec![sample::op(OpKind::Read, &[(20_000, 1000)], 4096, s / 2)];
        r.phases = vec![PhaseResult { phase: Phase::Verify, runtime_ns: s / 2, ops: reads }];
        r
    }

    #[test]
    fn a_verify_pass_is_in_the_reads_as_fio_counts_it() {
        let r = verified_write("randwrite", false);
        let j = Job::of(&r);
        assert_eq!((j.read.total_ios, j.read.runtime_ms, j.read.iops_int(), j.read.io_bytes), (1000, 500, 2000, 4_096_000));
        assert_eq!((j.write.total_ios, j.write.runtime_ms), (1000, 2000), "the writes keep their own time");
        assert_eq!((j.read.clat.n, j.lat_us[3] + j.lat_us[4]), (1000, 2000), "its latencies in the read figures and the buckets");
        assert_eq!((j.job_runtime_ms(), j.elapsed_s()), (2500, 3), "the job's time includes the pass");
        // A write job's interleaved reads (verify_backlog) count only the pass's time, as fio's do ...
        let r = verified_write("randwrite", true);
        let j = Job::of(&r);
        assert_eq!((j.read.total_ios, j.read.runtime_ms), (1200, 500));
        // ... and a mixed job's reads the measured phase's and the pass's.
        let r = verified_write("randrw", true);
        let j = Job::of(&r);
        assert_eq!((j.read.total_ios, j.read.runtime_ms), (1200, 2500));
    }

    #[test]
    fn bw_agg_is_a_share_of_the_group() {
        let r = sample::run();
        let jobs: Vec<Job> = r.jobs.iter().map(Job::of).collect();
        let groups = groups(&jobs);
        let g = groups[&0].dirs[0];
        // 16_384_000 bytes over 2000 ms.
        assert_eq!(
            (g.agg, g.min_bw, g.max_bw, g.min_run, g.max_run, g.io_bytes),
            (8_192_000, 2_048_000, 6_144_000, 2000, 2000, 16_384_000)
        );
        assert_eq!((g.share_json(&jobs[0].read.bw), g.share_json(&jobs[1].read.bw)), (25.0, 75.0));
        assert_eq!(g.share_terse(&jobs[0].read.bw), 25.0);
        assert_eq!(g.share_json(&Samples::default()), 0.0);
        assert_eq!(groups[&1].dirs[0].max_run, 0);
        // The end: the start, then group 0 (2 s), then group 1 (1 s).
        assert_eq!(end_ms(&r), 1_795_368_038_000);
    }
}
