//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`): one
//! line of `;`-separated fields per job, in fio 3.33's order (stat.c
//! `show_thread_status_terse_all`): 5 general fields, 41 for reads, 41 for
//! writes (v3 has no trim), 5 CPU fields, 7 I/O depths, 10 µs and 12 ms
//! latency buckets: 121 fields, then 9 per disk of the run
//! (`name;read_ios;write_ios;read_merges;write_merges;read_ticks;write_ticks;in_queue;util%`,
//! every disk on every job's line, as fio), then the job's description if it
//! has one.
//!
//! The numbers are the JSON's (see `fio_json` and `fio::stats`), formatted as
//! fio formats them: latencies in µs (min/max truncated, percentiles
//! truncated), bandwidth in KiB/s, IOPS as an integer, disk util `%3.2f%%`.
//!
//! ctx/majf/minf are the job's worker threads' (getrusage). slat is libaio's (0 elsewhere, see `fio_json`). Not known to storbench: the depth fields
//! follow the JSON's approximation (all at the job's queue depth), and disks
//! have no slaves (no `;slaves;…` fields). A run without disks has no disk
//! fields, as fio when it finds no disk.

use crate::fio::plat::Plat;
use crate::fio::stats::{self, Dir, GroupDir, Job, Lat, FIO_VERSION};
use storbench_metrics::STANDARD_PERCENTILES;
use storbench_model::{DiskUtil, RunResult};

/// Percentile slots per direction (fio's `FIO_IO_U_LIST_MAX_LEN`).
const SLOTS: usize = 20;

/// One line per job.
pub fn render(r: &RunResult) -> String {
    let entries = stats::entries(r);
    let jobs: Vec<Job> = entries.iter().map(Job::of_entry).collect();
    let groups = stats::groups(&jobs);
    let disks: Vec<String> = r.disk_util.iter().flat_map(disk).collect();
    jobs.iter().map(|j| line(j, &groups[&j.r.group].dirs, &disks)).collect()
}

/// fio's `print_disk_util` (terse, a disk without slaves): 9 fields.
fn disk(d: &DiskUtil) -> [String; 9] {
    [
        d.name.clone(),
        d.read_ios.to_string(),
        d.write_ios.to_string(),
        d.read_merges.to_string(),
        d.write_merges.to_string(),
        d.read_ticks.to_string(),
        d.write_ticks.to_string(),
        d.in_queue.to_string(),
        format!("{:3.2}%", stats::disk_util(d)),
    ]
}

fn line(j: &Job, g: &[GroupDir; 2], disks: &[String]) -> String {
    let mut f: Vec<String> = vec!["3".into(), FIO_VERSION.into(), j.r.name.clone(), j.r.group.to_string(), j.error().to_string()];
    f.extend(dir(&j.read, &g[0]));
    f.extend(dir(&j.write, &g[1]));
    let (usr, sys) = j.cpu();
    let c = &j.r.worker_cpu;
    f.extend([format!("{usr:.6}%"), format!("{sys:.6}%"), c.ctx.to_string(), c.majflt.to_string(), c.minflt.to_string()]);
    f.extend(j.depth_level().iter().map(|v| format!("{v:3.1}%")));
    f.extend(us_buckets(j).iter().chain(&j.latency_shares().2).map(|v| format!("{v:3.2}%")));
    f.extend_from_slice(disks);
    if !j.description().is_empty() {
        f.push(j.description().to_string());
    }
    f.join(";") + "\n"
}

/// fio's `stat_calc_lat_nu`: the µs buckets, with every sub-µs I/O added to
/// the first one (terse has no ns buckets).
fn us_buckets(j: &Job) -> [f64; 10] {
    let (_, mut us, _) = j.latency_shares();
    let total = j.rw_ios();
    if total > 0 {
        us[0] += 100.0 * j.lat_ns.iter().sum::<u64>() as f64 / total as f64;
    }
    us
}

/// The 41 fields of one direction.
fn dir(d: &Dir, g: &GroupDir) -> Vec<String> {
    let mut f = vec![(d.io_bytes >> 10).to_string(), (d.bw_bytes() / 1024).to_string(), d.iops_int().to_string(), d.runtime_ms.to_string()];
    f.extend(lat(&d.slat));
    f.extend(lat(&d.clat));
    f.extend(percentiles(&d.clat.plat));
    f.extend(lat(&d.lat));
    if d.bw.n > 0 {
        let b = &d.bw;
        f.extend([
            b.min.to_string(),
            b.max.to_string(),
            format!("{:.6}%", g.share_terse(b)),
            format!("{:.6}", b.mean),
            format!("{:.6}", b.dev),
        ]);
    } else {
        f.extend(["0", "0", "0.000000%", "0.000000", "0.000000"].map(String::from));
    }
    f
}

/// min;max;mean;dev in µs.
fn lat(l: &Lat) -> [String; 4] {
    [(l.min / 1000).to_string(), (l.max / 1000).to_string(), format!("{:.6}", l.mean / 1000.0), format!("{:.6}", l.dev / 1000.0)]
}

/// The 20 "P%=µs" slots: the default list's 17, then "0%=0". fio fills them
/// even for a direction without I/O (every value is then 0).
fn percentiles(p: &Plat) -> Vec<String> {
    let values = p.percentiles(&STANDARD_PERCENTILES);
    let mut f: Vec<String> = STANDARD_PERCENTILES.iter().zip(values).map(|(pct, v)| format!("{pct:.6}%={}", v / 1000)).collect();
    f.resize(SLOTS, "0%=0".into());
    f
}

/// fio's terse v3 as a format.
pub struct FioTerse;

impl crate::Exporter for FioTerse {
    fn name(&self) -> &'static str {
        "fio-terse"
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("fio-terse")
    }
    /// fio takes minimal and csv for terse too.
    fn fio_names(&self) -> &'static [&'static str] {
        &["terse", "minimal", "csv"]
    }
    fn describe(&self) -> &'static str {
        "fio 3.33's terse (minimal) output, version 3: one line per job"
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render(r).as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;
    use storbench_workload::OpKind;

    fn fields(line: &str) -> Vec<&str> {
        line.trim_end_matches('\n').split(';').collect()
    }

    /// The shape of a field: what fio's printf made of it.
    fn shape(f: &str) -> &'static str {
        let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
        let decimals = |s: &str| s.split_once('.').map_or(0, |(_, d)| d.len());
        match f {
            _ if f.contains("%=") => "percentile",
            _ if f.ends_with('%') && number(&f[..f.len() - 1]) => {
                ["pct", "pct1", "pct2", "pct", "pct", "pct", "pct6"][decimals(&f[..f.len() - 1])]
            }
            _ if number(f) && f.contains('.') => ["", "", "", "", "", "", "float6"][decimals(f)],
            _ if number(f) => "int",
            _ => "text",
        }
    }

    #[test]
    fn a_line_has_fios_121_fields_in_fios_shapes() {
        let real = fields(sample::real_terse());
        // The real line has one disk (9 fields) after the 121.
        assert_eq!((real.len(), real[121]), (130, "vda"));
        let ours = render(&sample::run());
        let lines: Vec<&str> = ours.lines().collect();
        assert_eq!(lines.len(), 3);
        let rr = fields(lines[0]);
        assert_eq!(rr.len(), 121);
        let shapes = |v: &[&str]| v.iter().map(|f| shape(f)).collect::<Vec<_>>();
        assert_eq!(shapes(&rr), shapes(&real[..121]));
        // A job with a description ends with it, as in fio.
        let w = fields(lines[2]);
        assert_eq!((w.len(), w[121]), (122, "beta job"));
    }

    #[test]
    fn fields_are_where_fio_puts_them() {
        let out = render(&sample::run());
        let rr = fields(out.lines().next().unwrap());
        let at = |n: usize| rr[n - 1];
        assert_eq!([at(1), at(2), at(3), at(4), at(5)], ["3", "fio-3.33", "rr", "0", "0"]);
        // read: KiB, KiB/s, IO/s, ms; slat; clat min/max in us.
        assert_eq!(
            [at(6), at(7), at(8), at(9), at(10), at(13), at(14), at(15)],
            ["4000", "2000", "500", "2000", "0", "0.000000", "40", "1500"]
        );
        // Percentiles in us, truncated; the three unused slots.
        assert_eq!(
            [at(18), at(30), at(31), at(32), at(34), at(35), at(37)],
            ["1.000000%=40", "99.000000%=80", "99.500000%=602", "99.900000%=1499", "99.990000%=1499", "0%=0", "0%=0"]
        );
        // bw min, max, share of the group, mean, deviation.
        assert_eq!([at(42), at(43), at(44), at(45), at(46)], ["1920", "2080", "25.000000%", "2000.000000", "113.137085"]);
        // An idle write direction still has fio's percentile slots.
        assert_eq!([at(47), at(50), at(59), at(87)], ["0", "0", "1.000000%=0", "0.000000"]);
        assert_eq!([at(88), at(89), at(90), at(93), at(94)], ["2.500000%", "12.500000%", "0", "100.0%", "0.0%"]);
        // us buckets 50, 100, 750 and ms bucket 2.
        assert_eq!([at(104), at(105), at(108), at(110), at(121)], ["95.00%", "4.00%", "0.90%", "0.10%", "0.00%"]);
        let w = fields(out.lines().nth(2).unwrap());
        assert_eq!([w[4], w[46], w[47], w[48], w[96]], ["5", "4000", "4000", "502", "100.0%"]);
    }

    #[test]
    fn sub_microsecond_ios_count_in_the_first_us_bucket() {
        let s = 1_000_000_000;
        let ops = vec![sample::op(OpKind::Read, &[(500, 10), (1500, 10), (3000, 20)], 4096, s)];
        let r = storbench_model::RunResult { jobs: vec![sample::job("n", 0, &[("rw", "read")], s, ops)], ..sample::run() };
        let f: Vec<String> = fields(&render(&r)).iter().map(|s| s.to_string()).collect();
        assert_eq!([&f[99], &f[100]], ["50.00%", "50.00%"]);
    }

    #[test]
    fn a_direction_from_fios_own_numbers_is_fios_41_fields() {
        let d = sample::real_dir(&sample::real_json()["jobs"][0]["read"]);
        let real = fields(sample::real_terse());
        assert_eq!(dir(&d, &sample::real_group(&d)), real[5..46]);
        assert_eq!(dir(&Dir::empty(), &GroupDir::default()), real[46..87]);
    }

    #[test]
    fn a_disk_from_fios_own_numbers_is_fios_9_fields() {
        let real = fields(sample::real_terse());
        let vda = sample::real_disk(&sample::real_json()["disk_util"][0]);
        assert_eq!(disk(&vda), real[121..130]);
        assert_eq!(real[129], "65.59%");
        // The whole tail of the line, character for character.
        let mut r = sample::run();
        r.jobs.truncate(1);
        r.disk_util = vec![vda];
        let ours = render(&r);
        assert_eq!(fields(&ours).len(), 130);
        assert!(ours.ends_with(";0.00%;vda;30213;0;0;0;981;0;980;65.59%\n"), "{ours}");
        assert!(sample::real_terse().ends_with(";0.00%;vda;30213;0;0;0;981;0;980;65.59%"));
    }

    #[test]
    fn every_job_line_has_every_disk_before_the_description() {
        let mut r = sample::run();
        r.disk_util = vec![sample::real_disk(&sample::real_json()["disk_util"][0]), sample::busy_disk()];
        let out = render(&r);
        let lines: Vec<Vec<&str>> = out.lines().map(fields).collect();
        assert_eq!(lines.iter().map(Vec::len).collect::<Vec<_>>(), [139, 139, 140]);
        for l in &lines {
            assert_eq!(l[121..130], ["vda", "30213", "0", "0", "0", "981", "0", "980", "65.59%"]);
            // fio caps util at 100.
            assert_eq!(l[130..139], ["nvme0n1", "12", "120345", "3", "4567", "8", "98765", "99001", "100.00%"]);
        }
        assert_eq!(lines[2][139], "beta job");
        // A small share keeps fio's two decimals.
        r.disk_util = vec![storbench_model::DiskUtil { name: "sdb".into(), util: 0.5, ..Default::default() }];
        assert!(render(&r).lines().next().unwrap().ends_with(";sdb;0;0;0;0;0;0;0;0.50%"));
    }

    #[test]
    fn registered_as_fio_terse() {
        let mut out = Vec::new();
        crate::find("fio-terse").unwrap().write(&storbench_model::RunSet::one(sample::run()), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3);
    }
}
