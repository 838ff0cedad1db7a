//! fio's per-I/O logs (`write_lat_log`, `write_bw_log`, `write_iops_log`
//! with `log_avg_msec=0`, fio's default) and its character-device targets
//! (`filename=/dev/null`, `/dev/zero`): the same job file run by fio 3.33
//! and by storbench gives the same log files with a line per I/O, and fio's
//! examples that use them run.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// psync then io_uring, reads and writes mixed: 1500 I/Os each, a line per
/// I/O in every log, offsets with log_offset.
const MIXED: &str = "[global]
filename=f.dat
size=8m
bs=4k
rw=randrw
rwmixread=70
number_ios=1500
write_lat_log=m
write_bw_log=m
write_iops_log=m
log_offset=1
[sync]
ioengine=psync
[ring]
stonewall
ioengine=io_uring
iodepth=8
";

/// Every `.log` file of `dir`, parsed: name -> lines of numbers (the
/// priority column, 0 or hex, kept as its text's length).
fn logs(dir: &Path) -> BTreeMap<String, Vec<Vec<u64>>> {
    listing(dir)
        .into_iter()
        .filter(|f| f.ends_with(".log"))
        .map(|f| {
            let text = std::fs::read_to_string(dir.join(&f)).unwrap();
            let rows = text.lines().map(|l| l.split(", ").map(|v| v.parse().unwrap_or_else(|_| panic!("{f}: {l}"))).collect()).collect();
            (f, rows)
        })
        .collect()
}

/// What every per-I/O line must be, in one worker's file of `kind`.
fn check_lines(name: &str, rows: &[Vec<u64>], size: u64) {
    let kind = name.split('_').nth(1).and_then(|k| k.split('.').next()).unwrap();
    let mut last = 0;
    for r in rows {
        assert_eq!(r.len(), 6, "{name}: time, value, ddir, bs, offset, prio: {r:?}");
        assert!(r[0] >= last, "{name}: times go forward within the run: {r:?} after {last}");
        last = r[0];
        assert!(r[2] <= 1 && r[3] == 4096 && r[5] == 0, "{name}: a read or write of the job's 4 KiB: {r:?}");
        assert!(r[4] % 4096 == 0 && r[4] + 4096 <= size, "{name}: the offset is a block of the file: {r:?}");
        match kind {
            "iops" => assert_eq!(r[1], 1, "{name}"),
            _ => assert!(r[1] > 0, "{name}: a latency or rate of an I/O that took time: {r:?}"),
        }
    }
}

#[test]
fn per_io_logs_are_fios_files_with_a_line_per_io() {
    if !fio_available() {
        return;
    }
    let d = scratch();
    let (f, s) = (d.path().join("fio"), d.path().join("sb"));
    for dir in [&f, &s] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join("m.fio"), MIXED).unwrap();
    }
    let fio = Command::new("fio").args(["m.fio", "--output=/dev/null"]).current_dir(&f).output().unwrap();
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    let r = storbench(&s, &["fio", "m.fio", "--output-format=json", "--output=out.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (theirs, ours) = (logs(&f), logs(&s));
    let names = |m: &BTreeMap<String, Vec<Vec<u64>>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs), "the same files");
    for (name, rows) in &ours {
        // io_uring's submission is timed apart too (slat), as fio's: the
        // drop-in submits each I/O in an enter of its own.
        assert_eq!(rows.len(), theirs[name].len(), "{name}: a line per I/O, as fio's");
        check_lines(name, rows, 8 << 20);
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(s.join("out.json")).unwrap()).unwrap();
    for (job, n) in [(0, 1), (1, 2)] {
        let ios = |dir: &str| doc["jobs"][job][dir]["total_ios"].as_u64().unwrap();
        let dirs = |d: u64| ours[&format!("m_iops.{n}.log")].iter().filter(|r| r[2] == d).count() as u64;
        assert_eq!((dirs(0), dirs(1)), (ios("read"), ios("write")), "job {job}: the log's reads and writes are the run's");
    }
}

/// In a results directory, and without log_offset: five columns.
#[test]
fn run_writes_per_io_logs_into_its_results_directory() {
    let d = scratch();
    let args = [
        "run",
        "--quiet",
        "--results-dir",
        "out",
        "--name",
        "w",
        "--size",
        "4m",
        "--rw",
        "write",
        "--numjobs",
        "2",
        "--write_iops_log",
        "logs/w",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_eq!(listing(&d.path().join("out/logs")), ["w_iops.1.log", "w_iops.2.log"]);
    let lines: usize =
        (1..=2).map(|n| std::fs::read_to_string(d.path().join(format!("out/logs/w_iops.{n}.log"))).unwrap().lines().count()).sum();
    assert_eq!(lines as u64, ios(&doc, 0, "write"), "a line per write of both workers");
    let first = std::fs::read_to_string(d.path().join("out/logs/w_iops.1.log")).unwrap();
    assert!(first.lines().all(|l| l.split(", ").count() == 5 && l.ends_with(", 1, 1, 4096, 0")), "{}", &first[..200.min(first.len())]);
}

/// A run stopped with Ctrl-C keeps a line for every I/O it counted.
#[test]
fn a_stopped_run_keeps_its_per_io_log() {
    let d = scratch();
    let args = [
        "run",
        "--quiet",
        "--results-dir",
        "out",
        "--name",
        "r",
        "--ioengine",
        "null",
        "--size",
        "1g",
        "--rate_iops",
        "5000",
        "--time_based",
        "1",
        "--runtime",
        "60",
        "--write_lat_log",
        "r",
    ];
    let started = Instant::now();
    let r = interrupted(d.path(), &args, Duration::from_secs(2));
    assert!(started.elapsed() < Duration::from_secs(20), "stopped within the bound: {:?}", started.elapsed());
    let doc = result_json(&d.path().join("out"));
    let reads = ios(&doc, 0, "read");
    let lines = std::fs::read_to_string(d.path().join("out/r_clat.1.log")).unwrap().lines().count() as u64;
    assert!(reads > 1000, "{}", r.stderr);
    assert_eq!(lines, reads, "every counted read has its line");
}

/// fio's examples/ssd-steadystate.fio, on a file instead of /dev/fioa and
/// 16 MiB: a sequential fill, then four random writers whose bandwidth log
/// (per I/O: no log_avg_msec) has a line per write.
#[test]
fn ssd_steadystate_fio_runs_scaled_down() {
    let d = scratch();
    let job = "[global]\nioengine=libaio\ndirect=1\ngroup_reporting\nfilename=ssd.dat\nsize=16m\n\
               [sequential-fill]\ndescription=Sequential fill phase\nrw=write\niodepth=16\nbs=1M\n\
               [random-write-steady]\nstonewall\ndescription=Random write steady state phase\nrw=randwrite\nbs=4K\niodepth=32\nnumjobs=4\n\
               write_bw_log=fioa-steady-state\n";
    std::fs::write(d.path().join("ssd.fio"), job).unwrap();
    let r = storbench(d.path(), &["fio", "ssd.fio", "--output=/dev/null"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let logs: Vec<String> = listing(d.path()).into_iter().filter(|f| f.ends_with(".log")).collect();
    assert_eq!(
        logs,
        (2..=5).map(|n| format!("fioa-steady-state_bw.{n}.log")).collect::<Vec<_>>(),
        "the writers' logs, numbered after the fill"
    );
    for l in &logs {
        let rows = std::fs::read_to_string(d.path().join(l)).unwrap();
        assert_eq!(rows.lines().count(), 4096, "{l}: each writer covers 16 MiB in 4 KiB writes");
        assert!(rows.lines().all(|r| r.split(", ").nth(2) == Some("1")), "{l}: writes");
    }
}

/// fio's examples/steadystate.fio as it is, but with its windows shortened:
/// four writers to /dev/null then four readers of /dev/zero (fio's size is
/// theirs), each group judged steady.
#[test]
fn steadystate_fio_runs_on_dev_null_and_dev_zero() {
    let d = scratch();
    let job = "[global]\nthreads=1\ngroup_reporting\ntime_based\nsize=128m\n\
               [ss-write]\nfilename=/dev/null\nrw=write\nbs=128k\nnumjobs=4\nruntime=20s\nss=iops:10%\nss_dur=2s\nss_ramp=1s\n\
               [ss-read]\nnew_group\nstonewall\nfilename=/dev/zero\nrw=randread\nbs=4k\nnumjobs=4\nruntime=20s\nss=bw_slope:1%\nss_dur=2s\nss_ramp=1s\n";
    std::fs::write(d.path().join("steadystate.fio"), job).unwrap();
    let started = Instant::now();
    let r = storbench(d.path(), &["fio", "steadystate.fio", "--output-format=json", "--output=out.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "group_reporting: one entry per group");
    for (j, dir) in jobs.iter().zip(["write", "read"]) {
        assert!(j[dir]["io_bytes"].as_u64().unwrap() > 0, "{}: {dir}s were measured", j["jobname"]);
        let ss = &j["steadystate"];
        assert!(ss["ss"].is_string() && ss["duration"] == 2, "{}: {ss}", j["jobname"]);
        let iops = ss["data"]["iops"].as_array().unwrap();
        assert_eq!(iops.len(), 2, "{}: the window's seconds: {ss}", j["jobname"]);
        assert!(iops.iter().all(|v| v.as_u64().unwrap() > 0), "{}: {ss}", j["jobname"]);
    }
}
