//! storbench as a drop-in for fio: a tool that runs `fio` by name (here a
//! small Python one, tests/fio_tool/fio_tool.py, written as CBT or kubestr
//! drive fio) runs storbench through a `fio` link and reads the JSON it
//! always read; with the real fio on PATH instead, it sees the same work.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The tool's lines, `job/dir` -> field -> value (plus "version").
type ToolLines = BTreeMap<String, BTreeMap<String, String>>;

fn run_tool(work: &Path, path_dir: Option<&Path>) -> ToolLines {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_tool/fio_tool.py");
    let mut path = std::env::var("PATH").unwrap_or_default();
    if let Some(d) = path_dir {
        path = format!("{}:{path}", d.display());
    }
    let out = Command::new("python3").arg(&tool).arg(work).env("PATH", path).output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "tool failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = ToolLines::new();
    for line in stdout.lines() {
        let fields: BTreeMap<String, String> =
            line.split_whitespace().filter_map(|f| f.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let key = match (fields.get("job"), fields.get("dir")) {
            (Some(j), Some(d)) => format!("{j}/{d}"),
            _ => "version".into(),
        };
        lines.insert(key, fields);
    }
    lines
}

fn fio_link(dir: &Path) -> std::path::PathBuf {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(bin(), bin_dir.join("fio")).unwrap();
    bin_dir
}

fn num(lines: &ToolLines, key: &str, field: &str) -> f64 {
    lines[key][field].parse().unwrap_or_else(|_| panic!("{key} {field} = {}", lines[key][field]))
}

#[test]
fn a_tool_that_runs_fio_runs_storbench_through_a_fio_link_and_sees_the_same_work() {
    let d = scratch();
    let work = d.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let sb = run_tool(&work, Some(&fio_link(d.path())));
    assert_eq!(sb["version"]["version"], "fio-3.33");
    // 8 MiB in 4 KiB blocks: written once in order, then read once at random
    // (every block once: fio's random map).
    assert_eq!((num(&sb, "writer/write", "ios"), num(&sb, "reader/read", "ios")), (2048.0, 2048.0));
    for key in ["writer/write", "reader/read"] {
        let (p50, p99, mean) = (num(&sb, key, "clat_p50_ns"), num(&sb, key, "clat_p99_ns"), num(&sb, key, "lat_mean_ns"));
        assert!(p50 > 0.0 && p99 >= p50 && mean > 0.0, "{key}: {:?}", sb[key]);
        let (iops, ios, ms) = (num(&sb, key, "iops"), num(&sb, key, "ios"), num(&sb, key, "runtime_ms"));
        assert!(ms > 0.0 && (iops * ms / 1000.0 - ios).abs() / ios < 0.05, "{key}: iops {iops} over {ms} ms is not {ios} I/Os");
        assert_eq!(sb[key]["error"], "0");
    }
    // The tool's directory holds what the tool made, no storbench results.
    assert_eq!(listing(&work), vec!["tool.dat", "tool.fio", "tool.json"]);

    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
        eprintln!("SKIP (comparison half): fio is not installed");
        return;
    }
    let real_work = d.path().join("real");
    std::fs::create_dir_all(&real_work).unwrap();
    let fio = run_tool(&real_work, None);
    assert!(fio["version"]["version"].starts_with("fio-3."), "{:?}", fio["version"]);
    let keys = |l: &ToolLines| l.keys().filter(|k| *k != "version").cloned().collect::<Vec<_>>();
    assert_eq!(keys(&fio), keys(&sb), "the same jobs and directions");
    for key in keys(&fio) {
        assert_eq!(num(&fio, &key, "ios"), num(&sb, &key, "ios"), "{key}: I/Os");
    }
}

#[test]
fn fios_command_line_its_precedence_sections_and_exit_codes() {
    let d = scratch();
    let fio = |args: &[&str]| storbench(d.path(), &[&["fio"][..], args].concat());
    let v = fio(&["--version"]);
    assert_eq!((v.code, v.stdout.as_str()), (0, "fio-3.33\n"));

    // Options before the first --name apply to every job; each --name starts one.
    let two = fio(&[
        "--size=1m",
        "--bs=8k",
        "--ioengine=psync",
        "--output-format=json",
        "--name=a",
        "--rw=read",
        "--name=b",
        "--rw=write",
        "--bs=4k",
    ]);
    assert_eq!(two.code, 0, "{}", two.stderr);
    let doc: serde_json::Value = serde_json::from_str(&two.stdout).expect("fio JSON on stdout");
    let ios = |j: usize, dir: &str| doc["jobs"][j][dir]["total_ios"].as_u64().unwrap();
    assert_eq!((ios(0, "read"), ios(1, "write")), (128, 256));
    assert_eq!(doc["fio version"], "fio-3.33");

    // A job file's [global] wins over the command line's, as in fio;
    // --section runs one job; --parse-only runs nothing.
    std::fs::write(d.path().join("j.fio"), "[global]\nbs=4k\nsize=1m\n[first]\nrw=read\n[second]\nrw=write\n").unwrap();
    // Command-line globals the file does not set apply to its jobs; a bare
    // fio flag (--thread) does not take the job file as its value.
    let one =
        fio(&["--bs=64k", "--filename=cli.dat", "--section=second", "--output-format=json", "--output=out.json", "--thread", "j.fio"]);
    assert_eq!((one.code, one.stdout.as_str()), (0, ""), "{}", one.stderr);
    assert!(d.path().join("cli.dat").exists(), "the job wrote the command line's file");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 1);
    assert_eq!((doc["jobs"][0]["jobname"].as_str(), doc["jobs"][0]["write"]["total_ios"].as_u64()), (Some("second"), Some(256)));
    let before = listing(d.path());
    let parse = fio(&["--parse-only", "j.fio"]);
    assert_eq!((parse.code, parse.stdout.as_str()), (0, ""));
    assert_eq!(listing(d.path()), before, "--parse-only touches nothing");

    // Bad input exits 1 with one line naming what is wrong; nothing is written.
    for (args, says) in [
        (&["--name=x", "--rw=sideways"][..], "sideways"),
        (&["--name=x", "--zonemode=zbd", "--size=1m"][..], "'zonemode' (zoned"),
        (&["--output-format=xml", "--name=x"][..], "xml"),
        (&["missing.fio"][..], "unable to open 'missing.fio'"),
        (&[][..], "No job(s) defined"),
    ] {
        let r = fio(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says) && r.stderr.trim().lines().count() == 1, "{args:?}: {}", r.stderr);
        assert_eq!(listing(d.path()), before, "{args:?} wrote something");
    }
}

#[test]
fn terse_and_json_plus_are_fio_shaped() {
    let d = scratch();
    let args = ["fio", "--name=t", "--size=1m", "--rw=randread", "--ioengine=psync", "--output-format=terse,json+"];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (terse, json) = r.stdout.split_once('\n').expect("a terse line, then JSON");
    let fields: Vec<&str> = terse.split(';').collect();
    // Terse v3: version, fio version, job name, group id, error, then the read block.
    assert_eq!(&fields[..5], &["3", "fio-3.33", "t", "0", "0"], "{terse}");
    assert_eq!(fields[5], "1024", "read KiB");
    let doc: serde_json::Value = serde_json::from_str(json).expect("json+ document");
    let bins = doc["jobs"][0]["read"]["clat_ns"]["bins"].as_object().expect("json+ has clat bins");
    let counted: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(counted, 256, "every read is in one bin");
}

/// fio's averaged logs, named and shaped as fio writes them, and read by
/// fio's own tools (Debian's fio package ships them): fio2gnuplot reads the
/// bandwidth log, fio_jsonplus_clat2csv the json+ bins.
#[test]
fn fio_logs_and_json_plus_are_read_by_fios_own_tools() {
    let d = scratch();
    let args = [
        "fio",
        "--name=lg",
        "--size=4m",
        "--rw=randrw",
        "--ioengine=psync",
        "--runtime=2",
        "--time_based",
        "--write_bw_log=bw",
        "--write_iops_log",
        "--write_lat_log=lat",
        "--log_avg_msec=500",
        "--output-format=json+",
        "--output=out.json",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut logs: Vec<String> = listing(d.path()).into_iter().filter(|f| f.ends_with(".log")).collect();
    logs.sort();
    assert_eq!(logs, ["bw_bw.1.log", "lat_clat.1.log", "lat_lat.1.log", "lat_slat.1.log", "lg_iops.1.log"]);
    let rows = |name: &str| -> Vec<Vec<u64>> {
        let text = std::fs::read_to_string(d.path().join(name)).unwrap();
        text.lines().map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect()).collect()
    };
    let (bw, iops) = (rows("bw_bw.1.log"), rows("lg_iops.1.log"));
    assert!(iops.len() >= 6, "two directions over about four windows: {iops:?}");
    for (b, i) in bw.iter().zip(&iops) {
        assert_eq!(b.len(), 5, "time, value, ddir, bs, prio");
        assert_eq!((b[0] % 500, b[0], b[2]), (0, i[0], i[2]), "windows end on multiples of log_avg_msec");
        assert!(b[1].abs_diff(i[1] * 4) <= 4, "4 KiB I/Os: KiB/s is 4 x IOPS ({b:?} {i:?})");
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    let total = |dir: &str| doc["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    let logged: u64 = iops.iter().map(|i| i[1] / 2).sum();
    let ios = total("read") + total("write");
    assert!(logged.abs_diff(ios) * 10 < ios, "the IOPS log over 500 ms windows accounts for the I/Os: {logged} vs {ios}");
    assert!(rows("lat_clat.1.log").iter().all(|l| l[1] > 0) && rows("lat_slat.1.log").is_empty());

    if !have("fio_jsonplus_clat2csv") || !have("fio2gnuplot") {
        assert!(std::env::var_os("CI").is_none(), "fio's tools are missing in CI: scripts/test.sh installs Debian's fio");
        eprintln!("SKIP (tools half): fio's tools are not installed");
        return;
    }
    let csv = Command::new("fio_jsonplus_clat2csv").args(["out.json", "clat"]).current_dir(d.path()).output().unwrap();
    assert!(csv.status.success(), "{}", String::from_utf8_lossy(&csv.stderr));
    let text = std::fs::read_to_string(d.path().join("clat_job0")).expect("one CSV per job");
    // Columns: nsec, then count, cumulative, percentile for slat, clat, lat of read, write, trim.
    let read_cumulative = text.lines().skip(1).filter_map(|l| l.split(", ").nth(5)?.trim().parse::<u64>().ok()).max();
    assert_eq!(read_cumulative, Some(total("read")), "read clat cumulative count reaches every read");
    let plot = Command::new("fio2gnuplot").args(["-b", "-d", "plot"]).current_dir(d.path()).output().unwrap();
    let said = String::from_utf8_lossy(&plot.stdout);
    assert!(said.contains("bw_bw.1.log"), "fio2gnuplot found the log: {said}");
    let avg = std::fs::read_to_string(d.path().join("plot/result.average")).unwrap_or_default();
    assert!(!avg.trim().is_empty(), "fio2gnuplot computed averages from it: {said}");
}

/// write_hist_log: the same files and columns as the real fio writes for
/// the same job (time, ddir, bs, 1856 >> coarseness buckets), a line per
/// direction at the first completion a window after its last, counts that
/// add up to the job's I/Os but for the last, unwritten window.
#[test]
fn histogram_logs_have_fios_shape_and_count_every_io() {
    let job = |dir: &Path, program: &str| {
        let args = [
            "--name=h",
            "--size=4m",
            "--rw=randrw",
            "--ioengine=psync",
            "--runtime=2",
            "--time_based",
            "--write_hist_log=hg",
            "--log_hist_msec=500",
            "--log_hist_coarseness=3",
            "--output-format=json",
            "--output=out.json",
        ];
        let out = Command::new(program).args(args).current_dir(dir).output().expect("runs");
        assert!(out.status.success(), "{program}: {}", String::from_utf8_lossy(&out.stderr));
        let mut logs: Vec<String> = listing(dir).into_iter().filter(|f| f.ends_with(".log")).collect();
        logs.sort();
        let text = std::fs::read_to_string(dir.join("hg_clat_hist.1.log")).unwrap_or_default();
        let rows: Vec<Vec<u64>> = text.lines().map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect()).collect();
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
        let ios: u64 = ["read", "write"].iter().map(|d| doc["jobs"][0][*d]["total_ios"].as_u64().unwrap()).sum();
        (logs, rows, ios)
    };
    let d = scratch();
    let fio = fio_link(d.path()).join("fio");
    let work = d.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let (sb_logs, sb_rows, sb_ios) = job(&work, fio.to_str().unwrap());
    assert_eq!(sb_logs, ["hg_clat_hist.1.log"]);
    assert!(sb_rows.len() >= 4, "two directions over about four windows: {}", sb_rows.len());
    assert!(sb_rows.iter().all(|r| r.len() == 3 + 1856 / 8), "time, ddir, bs and 232 columns");
    assert!(sb_rows.iter().all(|r| r[1] <= 1 && r[2] == 4096));
    for dir in 0..2 {
        let times: Vec<u64> = sb_rows.iter().filter(|r| r[1] == dir).map(|r| r[0]).collect();
        assert!(times.windows(2).all(|w| w[1] - w[0] >= 500), "a window apart: {times:?}");
    }
    let logged: u64 = sb_rows.iter().map(|r| r[3..].iter().sum::<u64>()).sum();
    assert!(logged <= sb_ios && logged * 10 > sb_ios * 6, "lines count the I/Os but the last window's: {logged} of {sb_ios}");
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh installs it");
        eprintln!("SKIP (fio half): fio is not installed");
        return;
    }
    let f = scratch();
    let (fio_logs, fio_rows, _) = job(f.path(), "fio");
    assert_eq!(fio_logs, sb_logs, "fio writes the same file");
    assert_eq!(fio_rows.first().map(Vec::len), sb_rows.first().map(Vec::len), "and the same columns");
}

/// offset_increment puts each worker on its own stripe (what lies between
/// is never written), sync=1 opens the file O_SYNC and end_fsync flushes it
/// once per worker at the end: the file's bytes and strace's record say so.
#[test]
fn stripes_synchronous_writes_and_a_final_fsync_as_in_fio() {
    if !have("strace") {
        assert!(std::env::var_os("CI").is_none(), "strace is missing in CI: scripts/install-deps.sh installs it");
        eprintln!("SKIP: strace is not installed");
        return;
    }
    let traced = |dir: &Path, extra: &[&str]| -> String {
        let mut args = vec![
            "-f",
            "-e",
            "trace=openat,fsync",
            "-o",
            "trace",
            bin(),
            "fio",
            "--name=s",
            "--filename=f",
            "--size=256k",
            "--offset_increment=1m",
            "--numjobs=2",
            "--rw=write",
            "--bs=64k",
        ];
        args.extend(extra);
        let out = Command::new("strace").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(dir.join("trace")).unwrap()
    };
    let d = scratch();
    let trace = traced(d.path(), &["--sync=1", "--end_fsync=1"]);
    let data = std::fs::read(d.path().join("f")).unwrap();
    assert_eq!(data.len(), (1 << 20) + (256 << 10), "the second stripe starts 1 MiB in");
    let zeros = |a: usize, b: usize| data[a..b].iter().all(|x| *x == 0);
    assert!(!zeros(0, 256 << 10) && !zeros(1 << 20, data.len()), "both stripes written");
    // A write-only fio job's file is only allocated (fio's layout): unwritten between the stripes.
    assert!(zeros(256 << 10, 1 << 20), "nothing written between the stripes");
    let sync_opens = |t: &str| t.lines().filter(|l| l.contains("openat(") && l.contains("\"f\"") && l.contains("O_SYNC")).count();
    let fsyncs = |t: &str| t.lines().filter(|l| l.contains("fsync(")).count();
    let plain = scratch();
    let plain = traced(plain.path(), &[]);
    assert_eq!((sync_opens(&trace), sync_opens(&plain)), (2, 0), "each worker opens the file O_SYNC with sync=1 only:\n{trace}");
    assert_eq!(fsyncs(&trace), fsyncs(&plain) + 2, "one final fsync per worker:\n{trace}\n---\n{plain}");
}

/// fio's startdelay holds a job back (its runtime counts from its own
/// start); rate_min ends a worker that falls below it, as an error, judged
/// as fio judges it: after two seconds, over at least a second since the
/// previous judgement (fio 3.33 ends this slow job at 3.0 s).
#[test]
fn startdelay_and_rate_min_as_in_fio() {
    let d = scratch();
    let t0 = std::time::Instant::now();
    let args = [
        "fio",
        "--size=4m",
        "--rw=randread",
        "--ioengine=psync",
        "--runtime=4",
        "--time_based",
        "--output-format=json",
        "--name=now",
        "--name=later",
        "--startdelay=1",
        "--name=slow",
        "--rate_iops_min=1000000000",
    ];
    let r = storbench(d.path(), &args);
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(r.code, 1, "one job ended with an error: {}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let job = |i: usize, k: &str| doc["jobs"][i][k].as_u64().unwrap();
    assert_eq!((job(0, "error"), job(1, "error"), job(2, "error")), (0, 0, 5));
    assert!(job(1, "job_runtime") >= 3900, "the delayed job still ran its four seconds");
    assert!(wall >= 4.9, "the delayed job ran a second after the first: {wall:.2} s in all");
    // fio records the rate two seconds in and judges it a second later.
    let slow = job(2, "job_runtime");
    assert!((2900..3600).contains(&slow) && doc["jobs"][2]["read"]["total_ios"].as_u64().unwrap() > 0, "{slow} ms");
}

/// fio's exitall: when the job that has it ends, the jobs running with it
/// stop too (their figures whole, not marked interrupted).
#[test]
fn exitall_ends_the_jobs_running_with_it() {
    let d = scratch();
    let t0 = std::time::Instant::now();
    let args = [
        "fio",
        "--size=4m",
        "--ioengine=psync",
        "--output-format=json",
        "--name=short",
        "--rw=read",
        "--io_size=8m",
        "--exitall",
        "--rate_iops=2000",
        "--name=long",
        "--rw=randread",
        "--runtime=20",
        "--time_based",
    ];
    let r = storbench(d.path(), &args);
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    // 2048 reads at 2000 IOPS: about a second, then the 20-second job ends too.
    assert_eq!(doc["jobs"][0]["read"]["total_ios"].as_u64(), Some(2048));
    assert!(wall < 8.0, "the long job ran on for {wall:.1} s");
    let long_ms = doc["jobs"][1]["job_runtime"].as_u64().unwrap();
    assert!((500..6000).contains(&long_ms) && doc["jobs"][1]["read"]["total_ios"].as_u64().unwrap() > 0, "{long_ms} ms");
}

/// fio's disk_util: the disk under the job's file, its counters over the run
/// (device-wide, so at least the job's own direct reads).
#[test]
fn disk_util_names_the_disk_under_the_files() {
    let d = scratch();
    let on_disk = Command::new("findmnt").args(["-n", "-o", "SOURCE", "--target"]).arg(d.path()).output().unwrap();
    let source = String::from_utf8_lossy(&on_disk.stdout).trim().to_string();
    if !source.starts_with("/dev/") {
        eprintln!("SKIP: {} is on {source}, not a block device", d.path().display());
        return;
    }
    let args = ["fio", "--name=du", "--size=4m", "--rw=randread", "--direct=1", "--ioengine=psync", "--output-format=json"];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let disk = &doc["disk_util"][0];
    let name = disk["name"].as_str().expect("a disk entry");
    assert!(source.contains(name) || std::path::Path::new(&format!("/sys/block/{name}")).exists(), "{name} vs {source}");
    assert!(disk["read_ios"].as_u64().unwrap() >= 1024, "the job's 1024 direct reads are counted: {disk}");
    let util = disk["util"].as_f64().unwrap();
    assert!(util > 0.0 && util <= 100.0, "{util}");
}
