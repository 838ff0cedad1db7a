//! fio's normal (human) output, laid out as fio 3.33 prints it (stat.c
//! `show_thread_status_normal`, `show_ddir_status`, `show_group_stats`): the
//! job lines fio prints before it starts, then per job the header, the
//! `  read: IOPS=..., BW=...` lines, clat/lat lines, clat percentiles, bw and
//! iops lines, latency buckets, cpu, I/O depths, issued I/Os, the "Run
//! status group" lines, and last the "Disk stats (read/write)" lines of the
//! run's disks (`print_disk_util`; none, and no heading, when the run has no
//! disks, as fio when it finds none). Tools scrape `IOPS=` and `BW=` from it.
//!
//! A CPU burner (fio's cpuio) is shown as fio shows it: no job line before
//! the start (a "..." for its clones), fio's line per worker after it
//! (`name (noop): ioengine=cpuio, cpuload=50, cpucycle=50000`), and a section
//! with cpu, depths and issued I/Os but no read or write lines. fio counts
//! each busy-idle cycle as a 0-byte read (`issued rwts: total=19,...`, a
//! `lat` bucket of the cycle's length); storbench counts no I/O it did not do.
//!
//! The numbers are the JSON's (see `fio_json` and `fio::stats`). Not known to
//! storbench: the pid (0), slat on io_uring (whose newest entry goes to the
//! kernel with the wait, so its submission is not timed apart: no slat line,
//! as fio shows none for sync engines; libaio's is shown), disk slaves (no `aggrios=` part); the time in the
//! header is the run's end in UTC; the engine named in the job line is
//! storbench's.

use crate::fio::num::{self, num2str, Unit};
use crate::fio::stats::{self, Dir, Group, GroupDir, Job, Lat, FIO_VERSION, LAT_KEYS, LAT_MS_KEYS};
use std::fmt::Write as _;
use storbench_metrics::STANDARD_PERCENTILES;
use storbench_model::{DiskUtil, JobResult, RunResult};

/// fio's default `significant_figures`.
const SIG_FIGS: usize = 4;

pub fn render(r: &RunResult) -> String {
    let entries = stats::entries(r);
    let jobs: Vec<Job> = entries.iter().map(Job::of_entry).collect();
    let groups = stats::groups(&jobs);
    let time = num::ctime(stats::end_ms(r) / 1000);
    let mut s = preamble(r);
    s.push('\n');
    for j in &jobs {
        s += &job(j, &groups[&j.r.group], &time);
    }
    for g in groups.values() {
        s += &group(g);
    }
    s + &disk_stats(&r.disk_util)
}

/// fio's `show_disk_util` for the normal output: the heading, then
/// `print_disk_util`'s line per disk (disks without slaves).
fn disk_stats(disks: &[DiskUtil]) -> String {
    if disks.is_empty() {
        return String::new();
    }
    let mut s = "\nDisk stats (read/write):\n".to_string();
    for d in disks {
        let _ = writeln!(
            s,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            d.name,
            d.read_ios,
            d.write_ios,
            d.read_merges,
            d.write_merges,
            d.read_ticks,
            d.write_ticks,
            d.in_queue,
            stats::disk_util(d)
        );
    }
    s
}

/// What fio prints as it sets the jobs up.
fn preamble(r: &RunResult) -> String {
    let mut s = String::new();
    for (j, g) in r.jobs.iter().zip(stats::reporting_groups(r)) {
        // fio describes no job line for an engine that does no I/O.
        if !j.spec.does_no_io() {
            s += &job_line(j, g);
        }
        if j.workers > 1 {
            s += "...\n";
        }
    }
    let n: u32 = r.jobs.iter().map(|j| j.workers).sum();
    let _ = writeln!(s, "{FIO_VERSION}\nStarting {n} process{}", if n == 1 { "" } else { "es" });
    for j in &r.jobs {
        if let Some(b) = j.spec.kind.cpu_burn() {
            let line =
                format!("{} ({}): ioengine={}, cpuload={}, cpucycle={}\n", j.name, b.mode.name(), j.engine, b.load, b.chunk.as_micros());
            s += &line.repeat(j.workers as usize);
        }
    }
    s
}

/// `name: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., (T) ..., ioengine=psync, iodepth=1`,
/// in its reporting group `g`.
fn job_line(j: &JobResult, g: u32) -> String {
    let size = |v: u64| num2str(v, SIG_FIGS, true, Unit::Byte);
    let (r, w) = (&j.spec.bs.read, &j.spec.bs.write);
    format!(
        "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}\n",
        j.name,
        g,
        stats::rw_name(j),
        size(r.min()),
        size(r.max()),
        size(w.min()),
        size(w.max()),
        size(w.min()),
        size(w.max()),
        j.engine,
        j.spec.iodepth
    )
}

fn job(j: &Job, g: &Group, time: &str) -> String {
    // fio prints a job that did no I/O for a burner's cycles, or for its error.
    let idle = j.rw_ios() == 0 && j.read.io_bytes + j.write.io_bytes == 0;
    if idle && j.r.spec.kind.cpu_burn().is_none() && j.error() == 0 {
        return String::new();
    }
    let r = j.r;
    let err = match j.error() {
        0 => " 0".to_string(),
        e => format!("{e:2} ({})", j.verror()),
    };
    let mut s = format!("{}: (groupid={}, jobs={}): err={err}: pid=0: {time}\n", r.name, r.group, r.workers);
    if !j.description().is_empty() {
        let _ = writeln!(s, "  Description  : [{}]", j.description());
    }
    for (name, d, gd) in [("read", &j.read, &g.dirs[0]), ("write", &j.write, &g.dirs[1])] {
        if d.io_bytes > 0 && d.runtime_ms > 0 {
            s += &dir(name, d, gd);
        }
    }
    s += &latency_lines(j);
    if j.sync.n > 0 {
        s += "  fsync/fdatasync/sync_file_range:\n";
        s += &lat_line("sync", &j.sync);
        s += &percentile_lines("sync", &j.sync);
    }
    s + &cpu_and_depths(j)
}

/// fio's `show_ddir_status` for read or write.
fn dir(name: &str, d: &Dir, g: &GroupDir) -> String {
    let bw = d.bw_bytes();
    let mut s = format!(
        "  {name}: IOPS={}, BW={} ({})({}/{}msec)\n",
        num2str(d.iops_int(), SIG_FIGS, false, Unit::None),
        num2str(bw, SIG_FIGS, true, Unit::BytePerSec),
        num2str(bw, SIG_FIGS, false, Unit::BytePerSec),
        num2str(d.io_bytes, SIG_FIGS, true, Unit::Byte),
        d.runtime_ms
    );
    if d.slat.n > 0 {
        s += &lat_line("slat", &d.slat);
    }
    if d.clat.n > 0 {
        s += &lat_line("clat", &d.clat);
    }
    if d.lat.n > 0 {
        s += &lat_line(" lat", &d.lat);
    }
    for (class, level, l) in d.shown_prios() {
        s += &lat_line(&format!("clat prio {class}/{level}"), l);
    }
    if d.clat.n > 0 {
        s += &percentile_lines("clat", &d.clat);
    }
    for (class, level, l) in d.shown_prios() {
        let share = 100.0 * l.n as f64 / d.clat.n.max(1) as f64;
        s += &percentile_lines(&format!("clat prio {class}/{level} ({share:.2}% of IOs)"), l);
    }
    s + &rate_lines(d, g)
}

/// fio's `display_lat`: `    clat (usec): min=30, max=786, avg=41.35, stdev=10.21`.
fn lat_line(name: &str, l: &Lat) -> String {
    let (mut min, mut max, mut mean, mut dev) = (l.min, l.max, l.mean, l.dev);
    let mut base = "nsec";
    for (unit, div, lo, hi, d) in [("msec", 1_000_000, 2_000_000, 99_999_999, 1e6), ("usec", 1000, 2000, 99_999, 1e3)] {
        if min > lo && max > hi && dev > d {
            (min, max, mean, dev, base) = (min / div, max / div, mean / d, dev / d, unit);
            break;
        }
    }
    format!(
        "    {name} ({base}): min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}\n",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None)
    )
}

/// fio's `show_clat_percentiles` for the default list (2 decimals).
fn percentile_lines(name: &str, l: &Lat) -> String {
    let values = l.percentiles();
    let (min, max) = (values.iter().copied().min().unwrap_or(0), values.iter().copied().max().unwrap_or(0));
    let (unit, divisor, steps) = if min > 2_000_000 && max > 99_999_999 {
        ("msec", 1_000_000, 2)
    } else if min > 2000 && max > 99_999 {
        ("usec", 1000, 1)
    } else {
        ("nsec", 1, 0)
    };
    let width = (((max / divisor) as f64).log10() + 1.0).max(5.0) as usize;
    let per_line = (80 - 7) / (2 + 10 + width);
    let mut s = format!("    {name} percentiles ({unit}):\n     |");
    for (i, (p, v)) in STANDARD_PERCENTILES.iter().zip(values.iter()).enumerate() {
        if i != 0 && i % per_line == 0 {
            s += "     |";
        }
        let v = (0..steps).fold(*v, |v, _| v.div_ceil(1000));
        let last = i + 1 == values.len();
        let _ = write!(s, " {p:5.2}th=[{v:>width$}]{}", if last { '\n' } else { ',' });
        if !last && i % per_line == per_line - 1 {
            s.push('\n');
        }
    }
    s
}

/// The bw and iops lines (only with samples, as fio).
fn rate_lines(d: &Dir, g: &GroupDir) -> String {
    let mut s = String::new();
    let b = &d.bw;
    if b.n > 0 {
        let per = g.share_json(b);
        let (mut min, mut max, mut mean, mut dev, mut unit) = (b.min, b.max, b.mean, b.dev, "KiB");
        if mean > 1024.0 * 1024.0 {
            (min, max, mean, dev, unit) = ((min as f64 / 1024.0) as u64, (max as f64 / 1024.0) as u64, mean / 1024.0, dev / 1024.0, "MiB");
        }
        let _ =
            writeln!(s, "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}", b.n);
    }
    let i = &d.iops;
    if i.n > 0 {
        let _ = writeln!(s, "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}", i.min, i.max, i.mean, i.dev, i.n);
    }
    s
}

/// fio's `show_latencies`: the nonzero buckets, five per line.
fn latency_lines(j: &Job) -> String {
    let (n, u, m) = j.latency_shares();
    bucket_lines("nsec", &LAT_KEYS, &n) + &bucket_lines("usec", &LAT_KEYS, &u) + &bucket_lines("msec", &LAT_MS_KEYS, &m)
}

fn bucket_lines(unit: &str, keys: &[&str], shares: &[f64]) -> String {
    let shown: Vec<String> = keys.iter().zip(shares).filter(|(_, v)| **v > 0.0).map(|(k, v)| format!("{k}={v:3.2}%")).collect();
    shown.chunks(5).map(|c| format!("  lat ({unit})   : {}\n", c.join(", "))).collect()
}

fn cpu_and_depths(j: &Job) -> String {
    let (usr, sys) = j.cpu();
    let dist = |keys: [&str; 7], v: [f64; 7]| keys.iter().zip(v).map(|(k, v)| format!("{k}={v:3.1}%")).collect::<Vec<_>>().join(", ");
    let batches = dist(["0", "4", "8", "16", "32", "64", ">=64"], j.batches());
    let c = &j.r.worker_cpu;
    let mut s = format!("  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf={}, minf={}\n", c.ctx, c.majflt, c.minflt);
    let _ = writeln!(s, "  IO depths    : {}", dist(["1", "2", "4", "8", "16", "32", ">=64"], j.depth_level()));
    let _ = writeln!(s, "     submit    : {batches}\n     complete  : {batches}");
    let (r, w) = (&j.read, &j.write);
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},0,{} short={},{},0,0 dropped=0,0,0,0",
        r.total_ios, w.total_ios, j.sync_ios, r.short_ios, w.short_ios
    );
    let (target, window, percentile) = j.latency_target();
    let _ = writeln!(
        s,
        "     latency   : target={target}, window={window}, percentile={percentile:.2}%, depth={}",
        j.r.latency_depth.unwrap_or(j.r.queue_depth)
    );
    s
}

/// fio's `show_group_stats`.
fn group(g: &Group) -> String {
    let mut s = format!("\nRun status group {} (all jobs):\n", g.id);
    for (label, d) in ["   READ", "  WRITE"].iter().zip(&g.dirs) {
        if d.max_run == 0 {
            continue;
        }
        let rate = |v: u64, pow2: bool| num2str(v, SIG_FIGS, pow2, Unit::BytePerSec);
        let _ = writeln!(
            s,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rate(d.agg, true),
            rate(d.agg, false),
            rate(d.min_bw, true),
            rate(d.max_bw, true),
            rate(d.min_bw, false),
            rate(d.max_bw, false),
            num2str(d.io_bytes, SIG_FIGS, true, Unit::Byte),
            num2str(d.io_bytes, SIG_FIGS, false, Unit::Byte),
            d.min_run,
            d.max_run
        );
    }
    s
}

/// fio's normal output as a format.
pub struct FioNormal;

impl crate::Exporter for FioNormal {
    fn name(&self) -> &'static str {
        "fio-normal"
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("fio-normal")
    }
    fn fio_names(&self) -> &'static [&'static str] {
        &["normal"]
    }
    fn describe(&self) -> &'static str {
        "fio 3.33's normal (human) output layout"
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render(r).as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;
    use crate::fio::stats::GroupDir;

    /// The lines of the real normal output from the one starting with `from`
    /// up to (not including) the first one starting with `to`.
    fn real_lines(from: &str, to: &str) -> String {
        let text = sample::real_normal();
        let start = text.find(&format!("\n{from}")).unwrap() + 1;
        let end = start + text[start..].find(&format!("\n{to}")).unwrap() + 1;
        text[start..end].to_string()
    }

    #[test]
    fn the_job_lines_are_fios() {
        let s = 1_000_000_000;
        let j = sample::job("rr", 0, &[("rw", "randread"), ("ioengine", "psync")], s, vec![]);
        let r = RunResult { jobs: vec![j], ..sample::run() };
        let real: String = sample::REAL.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(real.lines().nth(2), Some("Starting 1 process"));
        assert_eq!(preamble(&r), real);
        assert!(render(&sample::run()).starts_with(
            "rr: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1\n...\nrr2: "
        ));
    }

    #[test]
    fn a_direction_from_fios_own_numbers_is_fios_block() {
        let d = sample::real_dir(&sample::real_json()["jobs"][0]["read"]);
        let block = dir("read", &d, &sample::real_group(&d));
        assert!(block.starts_with("  read: IOPS=20.0k, BW=78.2MiB/s (82.0MB/s)(78.2MiB/1001msec)\n"), "{block}");
        assert_eq!(block, real_lines("  read:", "  lat ("));
    }

    #[test]
    fn latency_buckets_and_group_lines_from_fios_numbers_are_fios() {
        let json = sample::real_json();
        let shares = |key: &str, keys: &[&str]| keys.iter().map(|k| json["jobs"][0][key][*k].as_f64().unwrap()).collect::<Vec<f64>>();
        let lines = bucket_lines("nsec", &LAT_KEYS, &shares("latency_ns", &LAT_KEYS))
            + &bucket_lines("usec", &LAT_KEYS, &shares("latency_us", &LAT_KEYS))
            + &bucket_lines("msec", &LAT_MS_KEYS, &shares("latency_ms", &LAT_MS_KEYS));
        assert_eq!(lines.lines().count(), 3);
        assert_eq!(lines, real_lines("  lat (", "  cpu"));
        let d = sample::real_dir(&json["jobs"][0]["read"]);
        let g = Group { id: 0, dirs: [sample::real_group(&d), GroupDir::default()] };
        assert_eq!(group(&g), real_lines("\nRun status group", "\nDisk stats"));
    }

    #[test]
    fn disk_stats_from_fios_own_numbers_are_fios() {
        let vda = sample::real_disk(&sample::real_json()["disk_util"][0]);
        let real = &sample::real_normal()[sample::real_normal().find("\nDisk stats").unwrap()..];
        assert_eq!(real, "\nDisk stats (read/write):\n  vda: ios=30213/0, merge=0/0, ticks=981/0, in_queue=980, util=65.59%\n");
        assert_eq!(disk_stats(std::slice::from_ref(&vda)), real);
        // The whole run ends with them, after the group lines, as fio's does.
        let mut r = sample::run();
        r.disk_util = vec![vda, sample::busy_disk()];
        let out = render(&r);
        assert!(
            out.ends_with(
                "run=1000-1000msec

Disk stats (read/write):
  vda: ios=30213/0, merge=0/0, ticks=981/0, in_queue=980, util=65.59%
  nvme0n1: ios=12/120345, merge=3/4567, ticks=8/98765, in_queue=99001, util=100.00%
"
            ),
            "{out}"
        );
        // The notes' example line.
        let d = DiskUtil {
            name: "vda".into(),
            read_ios: 44940,
            write_ios: 6,
            read_ticks: 1359,
            write_ticks: 4,
            in_queue: 1364,
            util: 62.99,
            ..Default::default()
        };
        assert_eq!(
            disk_stats(&[d]),
            "\nDisk stats (read/write):\n  vda: ios=44940/6, merge=0/0, ticks=1359/4, in_queue=1364, util=62.99%\n"
        );
        assert!(!render(&sample::run()).contains("Disk stats"));
    }

    #[test]
    fn latency_lines_switch_units_as_fio_does() {
        let lat = |min, max, mean, dev| Lat { n: 10, min, max, mean, dev, plat: crate::fio::plat::Plat::of(&Default::default()) };
        // The notes' group_reporting run: nsec because min is below 2000.
        assert_eq!(
            lat_line("clat", &lat(460, 4_050_240, 29319.35, 83729.57)),
            "    clat (nsec): min=460, max=4050.2k, avg=29319.35, stdev=83729.57\n"
        );
        assert_eq!(
            lat_line(" lat", &lat(30_100, 786_900, 41352.763, 10210.821)),
            "     lat (usec): min=30, max=786, avg=41.35, stdev=10.21\n"
        );
        assert_eq!(lat_line("sync", &lat(2_500_000, 150_000_000, 9e6, 2e6)), "    sync (msec): min=2, max=150, avg= 9.00, stdev= 2.00\n");
    }

    #[test]
    fn a_storbench_run_in_fios_layout() {
        let out = render(&sample::run());
        let expected_rr = "\
rr: (groupid=0, jobs=2): err= 0: pid=0: Sun Nov 22 17:20:38 2026
  read: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec)
";
        assert!(out.contains(&format!("Starting 4 processes\n\n{expected_rr}")), "{out}");
        let percentiles = "    clat percentiles (usec):
     |  1.00th=[   41],  5.00th=[   41], 10.00th=[   41], 20.00th=[   41],
     | 30.00th=[   41], 40.00th=[   41], 50.00th=[   41], 60.00th=[   41],
     | 70.00th=[   41], 80.00th=[   41], 90.00th=[   41], 95.00th=[   41],
     | 99.00th=[   81], 99.50th=[  603], 99.90th=[ 1500], 99.95th=[ 1500],
     | 99.99th=[ 1500]
   bw (  KiB/s): min= 1920, max= 2080, per=25.00%, avg=2000.00, stdev=113.14, samples=2
   iops        : min=  480, max=  520, avg=500.00, stdev=28.28, samples=2
  lat (usec)   : 50=95.00%, 100=4.00%, 750=0.90%
  lat (msec)   : 2=0.10%
  cpu          : usr=2.50%, sys=12.50%, ctx=0, majf=0, minf=0
  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
";
        assert!(out.contains(percentiles), "{out}");
        assert!(out.contains("wsync: (groupid=1, jobs=1): err= 5 (ENOSPC (No space left on device)): pid=0: Sun Nov 22 17:20:38 2026\n  Description  : [beta job]\n  write: IOPS=502,"));
        assert!(
            out.contains("  lat (msec)   : 4=99.60%\n  fsync/fdatasync/sync_file_range:\n    sync (nsec): min=4997.1k, max=5001.2k,"),
            "{out}"
        );
        assert!(out.contains("     issued rwts: total=0,502,0,4 short=0,0,0,0 dropped=0,0,0,0\n     latency   : target=0, window=0, percentile=100.00%, depth=16\n"));
        assert!(out.ends_with(
            "\
Run status group 0 (all jobs):
   READ: bw=8000KiB/s (8192kB/s), 2000KiB/s-6000KiB/s (2048kB/s-6144kB/s), io=15.6MiB (16.4MB), run=2000-2000msec

Run status group 1 (all jobs):
  WRITE: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=4000KiB (4096kB), run=1000-1000msec
"
        ));
        assert_eq!(crate::find("fio-normal").unwrap().name(), "fio-normal");
    }
}
