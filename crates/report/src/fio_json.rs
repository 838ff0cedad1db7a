//! fio-compatible JSON: `fio-json` is fio 3.33's `--output-format=json`,
//! `fio-json+` is `--output-format=json+` (the same plus `bins`), so CBT,
//! fio-plot, kubestr and in-house scripts read them unchanged. Keys come in
//! fio's order, laid out as fio lays them out (see `fio::writer`).
//!
//! Mapping (see `fio::stats`): each storbench job is one fio group_reporting
//! entry with `jobs` = its workers, or, without `group_reporting`, one entry
//! per worker (fio's numjobs clones, each with the job's name). `clat_ns` is the service time in fixed-rate
//! runs and on engines that submit apart (libaio: from after io_submit, as
//! fio's issue_time), the latency otherwise; `lat_ns` is storbench's latency
//! (from the intended start in fixed-rate runs); `slat_ns` is the submission
//! latency on libaio and empty elsewhere (fio's for sync engines is empty
//! too; io_uring's newest entry goes in with the wait, untimed). `clat_ns`
//! percentiles and bins come from fio's own buckets, rebuilt exactly from the
//! histogram, so they are the values fio would print for the same latencies;
//! min/max/mean/stddev come from the histogram (within 0.1%; fio's are exact).
//! Bandwidth and IOPS samples are the per-second points of the whole job (fio
//! samples every 500 ms per worker and adds the workers' statistics up).
//! `fio version` says "fio-3.33" (tools check the prefix); storbench's own
//! version is under `storbench version`. `timestamp`/`time` are the run's end
//! as start + job durations (no set-up time), and `time` is in UTC. `desc`
//! appears only for a description of the job's own, not for the summary
//! storbench makes up for every job.
//!
//! `disk_util` comes after `jobs`, one entry per block device under the run's
//! files (`RunResult::disk_util`: counter differences over the run, device-wide
//! as fio's), with fio's keys and `util` as fio's float; it is left out when
//! the run has none, as fio leaves it out when it finds no disk. Disks are
//! never given slaves (no `aggr_*` keys).
//!
//! `ctx`, `majf` and `minf` are the job's worker threads' context switches
//! and page faults (getrusage, as fio's per thread). A CPU burner (fio's
//! cpuio) has all-zero read, write and trim entries: fio counts each of its
//! busy-idle cycles as a 0-byte read (`total_ios`, a `clat_ns` of the cycle's
//! length), storbench counts no I/O it did not do; its `usr_cpu` and
//! `sys_cpu` are fio's arithmetic, CPU ms over the summed runtime.
//!
//! Not known to storbench, so as fio prints them when there is nothing:
//! `global options` is left out,
//! `error` is 5 (EIO) for any failure (no errno is kept) but 110 (ETIMEDOUT)
//! for fio's latency bounds (max_latency, latency_target), `iodepth_level` is
//! all at the job's queue depth and `iodepth_submit`/`iodepth_complete` all in
//! the 1-4 bucket; `job options` lists the normalised spec, not what was typed.

use crate::fio::plat::Plat;
use crate::fio::stats::{self, Dir, Group, Job, Lat, BATCH_KEYS, DEPTH_KEYS, FIO_VERSION, LAT_KEYS, LAT_MS_KEYS};
use crate::fio::{num, writer::Obj, writer::Value};
use storbench_metrics::STANDARD_PERCENTILES;
use storbench_model::{DiskUtil, JobResult, RunResult};

/// `--output-format=json`.
pub fn render(r: &RunResult) -> String {
    document(r, false)
}

/// `--output-format=json+`: with `bins` next to every `percentile`.
pub fn render_plus(r: &RunResult) -> String {
    document(r, true)
}

fn document(r: &RunResult, plus: bool) -> String {
    let entries = stats::entries(r);
    let jobs: Vec<Job> = entries.iter().map(Job::of_entry).collect();
    let groups = stats::groups(&jobs);
    let end_ms = stats::end_ms(r);
    let mut root = Obj::new();
    root.str("fio version", FIO_VERSION)
        .int("timestamp", end_ms / 1000)
        .int("timestamp_ms", end_ms)
        .str("time", &num::ctime(end_ms / 1000))
        .arr("jobs", jobs.iter().map(|j| Value::Obj(job(j, &groups[&j.r.group], plus))).collect());
    if !r.disk_util.is_empty() {
        root.arr("disk_util", r.disk_util.iter().map(|d| Value::Obj(disk(d))).collect());
    }
    root.str("storbench version", &r.storbench_version);
    root.render()
}

fn job(j: &Job, g: &Group, plus: bool) -> Obj {
    let r = j.r;
    let (usr, sys) = j.cpu();
    let (lat_n, lat_u, lat_m) = j.latency_shares();
    let (target, window, percentile) = j.latency_target();
    let mut o = Obj::new();
    o.str("jobname", &r.name)
        .int("groupid", r.group as u64)
        .int("error", j.error())
        .int("eta", 0)
        .int("elapsed", j.elapsed_s())
        .obj("job options", job_options(r))
        .obj("read", dir(&j.read, &g.dirs[0], plus))
        .obj("write", dir(&j.write, &g.dirs[1], plus))
        .obj("trim", dir(&j.trim, &Default::default(), plus))
        .obj("sync", sync(j, plus))
        .int("job_runtime", j.job_runtime_ms())
        .float("usr_cpu", usr)
        .float("sys_cpu", sys)
        .int("ctx", r.worker_cpu.ctx)
        .int("majf", r.worker_cpu.majflt)
        .int("minf", r.worker_cpu.minflt)
        .obj("iodepth_level", Obj::floats(DEPTH_KEYS.into_iter().zip(j.depth_level())))
        .obj("iodepth_submit", Obj::floats(BATCH_KEYS.into_iter().zip(j.batches())))
        .obj("iodepth_complete", Obj::floats(BATCH_KEYS.into_iter().zip(j.batches())))
        .obj("latency_ns", Obj::floats(LAT_KEYS.into_iter().zip(lat_n)))
        .obj("latency_us", Obj::floats(LAT_KEYS.into_iter().zip(lat_u)))
        .obj("latency_ms", Obj::floats(LAT_MS_KEYS.into_iter().zip(lat_m)))
        .int("latency_depth", r.latency_depth.unwrap_or(r.queue_depth) as u64)
        .int("latency_target", target)
        .float("latency_percentile", percentile)
        .int("latency_window", window);
    if let Some(ss) = &r.steady_state {
        o.obj("steadystate", steadystate(ss));
    }
    o.str("desc", j.description());
    o
}

/// fio's steady-state block (fio judges one criterion: the first is shown;
/// storbench's own results have them all).
fn steadystate(ss: &storbench_model::SteadyStateResult) -> Obj {
    use storbench_workload::steady::{parse, Judge, Metric};
    let first = parse(&ss.criteria).ok().and_then(|c| c.first().copied());
    let (ss_name, percent, slope, metric) = match first {
        Some(c) => {
            let name = c.metric.name().to_string() + c.judge.suffix();
            let ss_name = if c.percent { format!("{name}:{:.6}%", c.limit) } else { c.to_string() };
            (ss_name, c.percent, matches!(c.judge, Judge::Slope | Judge::SlopeExcursion), Some(c.metric))
        }
        None => (ss.criteria.clone(), false, false, None),
    };
    let value = ss.judged.first().map_or(0.0, |v| v.value);
    let criterion = if percent { format!("{value:.6}%") } else { format!("{value:.6}") };
    let n = ss.window.len().max(1) as f64;
    let iops: Vec<u64> = ss.window.iter().map(|s| s.iops.round() as u64).collect();
    let bw: Vec<u64> = ss.window.iter().map(|s| s.bw.round() as u64).collect();
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / n;
    // fio's max_deviation and slope are in the metric's own units.
    let raw = match (percent, metric) {
        (true, Some(Metric::Iops)) => value * mean(&iops) / 100.0,
        (true, Some(Metric::Bw)) => value * mean(&bw) / 100.0,
        _ => value,
    };
    let mut data = Obj::new();
    data.int("bw_mean", mean(&bw).round() as u64)
        .int("iops_mean", mean(&iops).round() as u64)
        .arr("iops", iops.into_iter().map(Value::Int).collect())
        .arr("bw", bw.into_iter().map(Value::Int).collect());
    let mut o = Obj::new();
    o.str("ss", &ss_name)
        .int("duration", ss.dur_s as u64)
        .int("attained", u64::from(ss.attained))
        .str("criterion", &criterion)
        .float("max_deviation", if slope { 0.0 } else { raw })
        .float("slope", if slope { raw } else { 0.0 })
        .obj("data", data);
    o
}

/// fio's `json_array_add_disk_util` (a disk without slaves).
fn disk(d: &DiskUtil) -> Obj {
    let mut o = Obj::new();
    o.str("name", &d.name)
        .int("read_ios", d.read_ios)
        .int("write_ios", d.write_ios)
        .int("read_merges", d.read_merges)
        .int("write_merges", d.write_merges)
        .int("read_ticks", d.read_ticks)
        .int("write_ticks", d.write_ticks)
        .int("in_queue", d.in_queue)
        .float("util", stats::disk_util(d));
    o
}

/// The options of the job as storbench normalised them, in the order fio
/// lists command-line options (name first).
fn job_options(j: &JobResult) -> Obj {
    let s = &j.spec;
    let mut o = Obj::new();
    o.str("name", &s.name)
        .str("rw", s.rw.name())
        .str("bs", &s.bs.describe())
        .str("iodepth", &s.iodepth.to_string())
        .str("numjobs", &s.numjobs.to_string())
        .str("ioengine", &j.engine)
        .str("direct", &(s.direct as u8).to_string());
    if s.rw.is_mixed() {
        o.str("rwmixread", &s.rwmixread.to_string());
    }
    if let Some(size) = s.size {
        o.str("size", &size.to_string());
    }
    if let Some(rt) = s.runtime {
        o.str("runtime", &rt.as_secs().to_string());
    }
    o.str("filename", &s.filenames.join(":"));
    o
}

/// fio's `add_ddir_status_json` for read, write and trim.
fn dir(d: &Dir, g: &stats::GroupDir, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("io_bytes", d.io_bytes)
        .int("io_kbytes", d.io_bytes >> 10)
        .int("bw_bytes", d.bw_bytes())
        .int("bw", d.bw_bytes() / 1024)
        .float("iops", d.iops())
        .int("runtime", d.runtime_ms)
        .int("total_ios", d.total_ios)
        .int("short_ios", d.short_ios)
        .int("drop_ios", 0)
        .obj("slat_ns", lat(&d.slat, false, false))
        .obj("clat_ns", lat(&d.clat, true, plus))
        .obj("lat_ns", lat(&d.lat, false, false));
    if !d.shown_prios().is_empty() {
        o.arr("prios", d.shown_prios().iter().map(|(class, level, l)| Value::Obj(prio(*class, *level, l, plus))).collect());
    }
    o.int("bw_min", d.bw.min)
        .int("bw_max", d.bw.max)
        .float("bw_agg", g.share_json(&d.bw))
        .float("bw_mean", d.bw.mean)
        .float("bw_dev", d.bw.dev)
        .int("bw_samples", d.bw.n)
        .int("iops_min", d.iops.min)
        .int("iops_max", d.iops.max)
        .float("iops_mean", d.iops.mean)
        .float("iops_stddev", d.iops.dev)
        .int("iops_samples", d.iops.n);
    o
}

/// One priority's entry of fio's `prios` array (`clat_ns` as fio names it
/// without lat_percentiles).
fn prio(class: u8, level: u8, l: &Lat, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("prioclass", u64::from(class)).int("prio", u64::from(level)).obj("clat_ns", lat(l, true, plus));
    o
}

fn sync(j: &Job, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("total_ios", j.sync_ios).obj("lat_ns", lat(&j.sync, true, plus));
    o
}

/// fio's `add_ddir_lat_json`: percentiles (and json+'s bins) only where fio
/// prints them by default (clat and sync) and only with samples.
fn lat(l: &Lat, percentiles: bool, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("min", l.min).int("max", l.max).float("mean", l.mean).float("stddev", l.dev).int("N", l.n);
    if percentiles && l.n > 0 {
        let mut p = Obj::new();
        for (pct, v) in STANDARD_PERCENTILES.iter().zip(l.percentiles()) {
            p.int(&format!("{pct:.6}"), v);
        }
        o.obj("percentile", p);
        if plus {
            o.obj("bins", bins(&l.plat));
        }
    }
    o
}

fn bins(p: &Plat) -> Obj {
    let mut o = Obj::new();
    for (value, count) in p.bins() {
        o.int(&value.to_string(), count);
    }
    o
}

/// fio's JSON as a format.
pub struct FioJson;

impl crate::Exporter for FioJson {
    fn name(&self) -> &'static str {
        "fio-json"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["fiojson"]
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("fio-json")
    }
    fn fio_names(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn describe(&self) -> &'static str {
        "fio 3.33's --output-format=json shape (as fio.json)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("fio.json")
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render(r).as_bytes()))
    }
}

/// fio's json+ as a format.
pub struct FioJsonPlus;

impl crate::Exporter for FioJsonPlus {
    fn name(&self) -> &'static str {
        "fio-json+"
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("fio-json+")
    }
    fn fio_names(&self) -> &'static [&'static str] {
        &["json+"]
    }
    fn describe(&self) -> &'static str {
        "fio 3.33's --output-format=json+ shape (fio-json with clat bins)"
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render_plus(r).as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;
    use serde_json::Value as J;

    /// A real fio 3.33 json+ document: one psync randread job.
    const REAL: &str = include_str!("fio/testdata/fio-3.33-randread.json+");

    /// Every key with its path, in document order (fio puts one pair on each
    /// line, so the indentation gives the depth); the contents of objects
    /// whose keys are data (job options, percentiles, bins) are left out.
    fn key_paths(text: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for line in text.lines() {
            let depth = (line.len() - line.trim_start().len()) / 2;
            let Some(key) = line.trim_start().strip_prefix('"').and_then(|l| l.split_once("\" : ")).map(|(k, _)| k) else {
                continue;
            };
            stack.truncate(depth.saturating_sub(1));
            stack.resize(depth - 1, "[]".into());
            stack.push(key.to_string());
            let path = format!("/{}", stack.join("/"));
            if !["job options/", "percentile/", "bins/"].iter().any(|p| path.contains(p)) {
                out.push(path);
            }
        }
        out
    }

    fn one_job_run() -> RunResult {
        let mut r = sample::run();
        r.jobs.truncate(1);
        r
    }

    #[test]
    fn keys_come_in_fios_order_and_layout() {
        let real = key_paths(REAL);
        assert_eq!(real.len(), 217);
        assert_eq!(real[0], "/fio version");
        assert!(real.contains(&"/jobs/[]/read/clat_ns/bins".to_string()));
        assert_eq!(real[real.len() - 1], "/disk_util/[]/util");
        let mut r = one_job_run();
        r.disk_util = vec![real_disk()];
        let ours = key_paths(&render_plus(&r));
        // Only storbench's own version (last) is not fio's.
        assert_eq!(ours.last().map(String::as_str), Some("/storbench version"));
        assert_eq!(ours[..ours.len() - 1], real[..]);
        // Without disks there is no disk_util, as in fio.
        let without = key_paths(&render_plus(&one_job_run()));
        assert_eq!(without[..without.len() - 1], real[..real.len() - 10]);
    }

    /// The real document's disk.
    fn real_disk() -> storbench_model::DiskUtil {
        let doc: J = serde_json::from_str(REAL).unwrap();
        sample::real_disk(&doc["disk_util"][0])
    }

    #[test]
    fn disk_util_from_fios_own_numbers_is_fios_text() {
        let mut r = one_job_run();
        r.disk_util = vec![real_disk()];
        // From `"disk_util" : [` to its `]`, character for character.
        let start = REAL.find("  \"disk_util\" : [").unwrap();
        let end = start + REAL[start..].find("\n  ]").unwrap() + 4;
        let block = &REAL[start..end];
        assert!(block.contains("\"util\" : 61.130922\n"), "{block}");
        for text in [render(&r), render_plus(&r)] {
            assert!(text.contains(&format!("\n  ],\n{block},\n  \"storbench version\" : \"0.1.0\"\n}}\n")), "{text}");
        }
    }

    #[test]
    fn every_disk_is_listed_in_order_util_capped_as_fio() {
        let mut r = sample::run();
        r.disk_util = vec![real_disk(), sample::busy_disk()];
        let text = render(&r);
        let doc: J = serde_json::from_str(&text).unwrap();
        let disks = doc["disk_util"].as_array().unwrap();
        assert_eq!(disks.len(), 2);
        assert_eq!((disks[0]["name"].as_str(), disks[1]["name"].as_str()), (Some("vda"), Some("nvme0n1")));
        let d = &disks[1];
        let second = &text[text.find("\"name\" : \"nvme0n1\"").unwrap()..];
        let keys: Vec<&str> = second.lines().take(10).map(|l| l.trim_start().split('"').nth(1).unwrap_or("")).collect();
        let fio_keys =
            ["name", "read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue", "util", ""];
        assert_eq!(keys, fio_keys);
        assert_eq!(
            (d["write_ios"].as_u64(), d["write_merges"].as_u64(), d["write_ticks"].as_u64()),
            (Some(120_345), Some(4567), Some(98_765))
        );
        assert_eq!((d["in_queue"].as_u64(), d["read_merges"].as_u64()), (Some(99_001), Some(3)));
        // fio caps util at 100 and prints it with %f.
        assert!(text.contains("      \"util\" : 100.000000\n"), "{text}");
        // Not a number (no time measured): 0, as fio prints for no time.
        r.disk_util[1].util = f64::NAN;
        assert!(render(&r).contains("      \"util\" : 0.000000\n"));
    }

    #[test]
    fn json_plus_adds_the_bins_fio_would_print() {
        let doc: J = serde_json::from_str(&render_plus(&sample::run())).unwrap();
        let clat = &doc["jobs"][0]["read"]["clat_ns"];
        let bins = serde_json::json!({ "40192": 950, "80384": 40, "602112": 9, "1499136": 1 });
        assert_eq!(clat["bins"], bins);
        assert_eq!(clat["N"], 1000);
        // fio's long-double comparison puts 99.9% of 1000 at the 1000th I/O.
        assert_eq!((clat["percentile"]["50.000000"].as_u64(), clat["percentile"]["99.900000"].as_u64()), (Some(40192), Some(1499136)));
        assert_eq!(clat["percentile"]["99.500000"], 602112);
        assert_eq!(doc["jobs"][2]["sync"]["lat_ns"]["bins"], serde_json::json!({ "5013504": 4 }));
        // As in fio: no bins in plain json; no percentiles or bins for lat_ns.
        let plain: J = serde_json::from_str(&render(&sample::run())).unwrap();
        assert!(plain["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
        assert!(plain["jobs"][0]["read"]["clat_ns"]["percentile"].is_object());
        assert!(doc["jobs"][0]["read"]["lat_ns"].get("percentile").is_none());
    }

    #[test]
    fn values_are_computed_as_fio_computes_them() {
        let text = render(&sample::run());
        assert!(text.starts_with("{\n  \"fio version\" : \"fio-3.33\",\n  \"timestamp\" : 1795368038,\n"), "{text}");
        let doc: J = serde_json::from_str(&text).unwrap();
        assert_eq!((doc["time"].as_str(), doc["storbench version"].as_str()), (Some("Sun Nov 22 17:20:38 2026"), Some("0.1.0")));
        assert!(doc.get("disk_util").is_none() && doc.get("global options").is_none());
        let rr = &doc["jobs"][0];
        let read = &rr["read"];
        assert_eq!((read["bw_bytes"].as_u64(), read["bw"].as_u64(), read["iops"].as_f64()), (Some(2_048_000), Some(2000), Some(500.0)));
        assert_eq!((read["bw_min"].as_u64(), read["bw_max"].as_u64(), read["bw_agg"].as_f64()), (Some(1920), Some(2080), Some(25.0)));
        assert_eq!((read["bw_dev"].as_f64(), read["iops_stddev"].as_f64()), (Some(113.137085), Some(28.284271)));
        assert_eq!((rr["job_runtime"].as_u64(), rr["usr_cpu"].as_f64(), rr["sys_cpu"].as_f64()), (Some(4000), Some(2.5), Some(12.5)));
        assert_eq!(rr["iodepth_level"]["1"], 100.0);
        assert_eq!((rr["iodepth_submit"]["4"].as_f64(), rr["iodepth_complete"]["4"].as_f64()), (Some(100.0), Some(100.0)));
        assert_eq!((rr["latency_us"]["50"].as_f64(), rr["latency_us"]["100"].as_f64()), (Some(95.0), Some(4.0)));
        assert_eq!((rr["latency_us"]["750"].as_f64(), rr["latency_ms"]["2"].as_f64()), (Some(0.9), Some(0.1)));
        assert!(rr.get("desc").is_none());
        assert_eq!(doc["jobs"][1]["read"]["bw_agg"], 75.0);
        let w = &doc["jobs"][2];
        assert_eq!((w["desc"].as_str(), w["error"].as_u64(), w["groupid"].as_u64()), (Some("beta job"), Some(5), Some(1)));
        assert_eq!((w["write"]["total_ios"].as_u64(), w["sync"]["total_ios"].as_u64()), (Some(502), Some(4)));
        // 2 ms is in [2, 4) ms, as fio counts it.
        assert_eq!(w["latency_ms"]["4"].as_f64(), Some(99.601594));
        assert_eq!(w["latency_ms"]["2"], 0.0);
    }

    #[test]
    fn both_formats_are_registered() {
        let mut out = Vec::new();
        let runs = storbench_model::RunSet::one(sample::run());
        crate::find("fio-json+").unwrap().write(&runs, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), render_plus(&sample::run()));
        assert_eq!(crate::find("fio-json").unwrap().file_name(), Some("fio.json"));
        assert_eq!(crate::find("fio-json+").unwrap().file_name(), None);
    }
}
