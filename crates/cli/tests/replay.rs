//! Trace replay: a log fio captured is replayed by storbench onto a file, and
//! the iolog storbench writes of what it issued is compared with the trace:
//! the same operations, offsets and sizes, at the same times (or scaled).

mod common;
use common::*;
use std::path::Path;
use std::sync::Mutex;

/// The tests of this file run one at a time: the timing test measures when
/// operations are issued, and the others would take its cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// (µs, action, offset, length) of a v3 iolog: fio's times from its first
/// operation, as replay schedules them; storbench's from the job's start
/// (so a late first operation does not shift the rest).
fn operations(path: &Path, from_first: bool) -> Vec<(i64, String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.starts_with("fio version 3 iolog\n"), "{text:.200}");
    let ops: Vec<(i64, String, u64, u64)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5).then(|| (f[0].parse().unwrap(), f[2].to_string(), f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    let t0 = if from_first { ops.first().map_or(0, |o| o.0) } else { 0 };
    ops.into_iter().map(|(t, a, o, l)| (t - t0, a, o, l)).collect()
}

/// fio's own capture: a 70/30 mix at 500 IOPS a direction (1 ms apart), 300 operations.
fn fio_capture(dir: &Path) -> Option<std::path::PathBuf> {
    if !have("fio") {
        eprintln!("skipping: fio is not installed (scripts/install-deps.sh installs it)");
        return None;
    }
    let log = dir.join("captured.log");
    let out = std::process::Command::new("fio")
        .args(["--name=cap", "--size=4m", "--rw=randrw", "--rwmixread=70", "--bs=4k", "--rate_iops=500", "--number_ios=300"])
        .arg(format!("--filename={}", dir.join("fio.dat").display()))
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output=/dev/null")
        .output()
        .expect("run fio");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(log)
}

/// Replays `log` and returns the result document and what storbench issued.
fn replay(dir: &Path, log: &Path, tag: &str, extra: &[&str]) -> (serde_json::Value, Vec<(i64, String, u64, u64)>) {
    let (issued, out) = (dir.join(format!("{tag}.log")), format!("out-{tag}"));
    // Memory-backed where there is /dev/shm: the test is of the replay's
    // timing, not of a disk's writeback stalls.
    let shm = tempfile::Builder::new().prefix("storbench-replay-").tempdir_in("/dev/shm").ok();
    let target = shm.as_ref().map_or(dir.to_path_buf(), |s| s.path().to_path_buf()).join(format!("{tag}.dat"));
    let mut args = vec!["replay", log.to_str().unwrap(), "--filename", target.to_str().unwrap(), "--size", "4m"];
    args.extend(["--write_iolog", issued.to_str().unwrap(), "--results-dir", &out, "--quiet"]);
    args.extend(extra);
    let r = storbench(dir, &args);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    (result_json(&dir.join(&out)), operations(&issued, false))
}

/// At least 80% of the operations within 1 ms of their (scaled) recorded
/// time, and none beyond 50 ms: the test machine is shared (2 cores, tests
/// and builds beside it), and a thread that loses its core when its time
/// comes issues late whatever it does (30 of 300 were at load 6: 95% was
/// too tight). A replay that drifts fails at once: its error grows with
/// every operation.
fn assert_on_time(trace: &[(i64, String, u64, u64)], got: &[(i64, String, u64, u64)], speed: f64) {
    let off: Vec<i64> = trace.iter().zip(got).map(|(t, g)| (g.0 - (t.0 as f64 / speed) as i64).abs()).collect();
    let late: Vec<&i64> = off.iter().filter(|o| **o > 1000).collect();
    assert!(late.len() * 5 <= got.len(), "{} of {} operations off by more than 1 ms: {late:?}", late.len(), got.len());
    let worst = off.iter().max().copied().unwrap_or(0);
    assert!(worst <= 50_000, "an operation was issued {worst} us off its time");
}

#[test]
fn a_fio_capture_replays_with_the_same_operations_at_the_same_times() {
    let _one = serial();
    let d = scratch();
    let Some(log) = fio_capture(d.path()) else { return };
    let trace = operations(&log, true);
    assert_eq!(trace.len(), 300);
    assert!(trace.last().unwrap().0 > 250_000, "the capture is spread over time: {:?}", trace.last());
    for (tag, speed, extra) in [("same", 1.0, vec![]), ("twice", 2.0, vec!["--time-scale", "2"])] {
        let (doc, got) = replay(d.path(), &log, tag, &extra);
        let ops = |v: &[(i64, String, u64, u64)]| v.iter().map(|o| (o.1.clone(), o.2, o.3)).collect::<Vec<_>>();
        assert_eq!(ops(&got), ops(&trace), "{tag}: the same operations, offsets and sizes in the same order");
        assert_on_time(&trace, &got, speed);
        let r = &doc["jobs"][0]["replay"];
        assert_eq!((r["records"].as_u64(), r["issued"].as_u64(), r["left"].as_u64()), (Some(300), Some(300), Some(0)), "{r}");
        assert_eq!(r["format"], "fio iolog v3");
        assert_eq!(r["speed"].as_f64(), Some(speed));
        // The lag histogram says what the log shows, by the same rule as
        // assert_on_time (80% within 1 ms, none past 50 ms). A p95 bound
        // failed in CI; on this machine with a third of its CPU stolen the
        // log itself had 2..25 of 300 operations late by 1 to 5.7 ms.
        let at =
            |q: f64| r["lag"]["percentiles"].as_array().unwrap().iter().find(|p| p[0].as_f64() == Some(q)).unwrap()[1].as_u64().unwrap();
        assert!(at(80.0) < 1_000_000, "{tag}: issue lag p80 {} ns", at(80.0));
        assert!(r["lag"]["max_ns"].as_u64().unwrap() <= 50_000_000, "{tag}: issue lag max {}", r["lag"]["max_ns"]);
        assert_eq!(r["lag"]["count"].as_u64(), Some(300), "{tag}: one lag per operation");
        let h = storbench(d.path(), &["report", &format!("out-{tag}"), "-o", &format!("{tag}.html")]);
        assert_eq!(h.code, 0, "{}", h.stderr);
        assert!(std::fs::read_to_string(d.path().join(format!("{tag}.html"))).unwrap().contains("issue lag against the recorded times"));
        let (reads, writes) = (ios(&doc, 0, "read"), ios(&doc, 0, "write"));
        let want_reads = trace.iter().filter(|o| o.1 == "read").count() as u64;
        assert_eq!((reads, writes), (want_reads, 300 - want_reads), "{tag}");
    }
}

#[test]
fn several_workers_share_a_trace_each_record_once() {
    let _one = serial();
    let d = scratch();
    let Some(log) = fio_capture(d.path()) else { return };
    let trace = operations(&log, true);
    let target = d.path().join("shared.dat");
    let r = storbench(
        d.path(),
        &["replay", log.to_str().unwrap(), "--filename", target.to_str().unwrap(), "--size", "4m", "--numjobs", "3"]
            .into_iter()
            .chain(["--write_iolog", "w.log", "--results-dir", "o", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("o"));
    assert_eq!(doc["jobs"][0]["replay"]["issued"], 300, "{}", doc["jobs"][0]["replay"]);
    let mut issued: Vec<(String, u64, u64)> =
        (0..3).flat_map(|w| operations(&d.path().join(format!("w.log.{w}")), false)).map(|o| (o.1, o.2, o.3)).collect();
    let mut want: Vec<(String, u64, u64)> = trace.iter().map(|o| (o.1.clone(), o.2, o.3)).collect();
    let busy = (0..3).filter(|w| !operations(&d.path().join(format!("w.log.{w}")), false).is_empty()).count();
    assert!(busy >= 2, "the trace is split ({busy} of 3 workers had operations: it covers 4 MiB, 4 groups)");
    issued.sort();
    want.sort();
    assert_eq!(issued, want, "the three workers' logs hold the trace's operations, each once");
}

#[test]
fn without_stalls_the_trace_runs_as_fast_as_the_queue_allows() {
    let _one = serial();
    let d = scratch();
    let Some(log) = fio_capture(d.path()) else { return };
    let (doc, got) = replay(d.path(), &log, "nostall", &["--no-stall"]);
    assert_eq!(got.len(), 300);
    assert!(got.last().unwrap().0 < 100_000, "300 operations, not 0.3 s of recorded pauses: {:?}", got.last());
    assert!(doc["jobs"][0]["replay"]["speed"].is_null());
    // Without a schedule, latency counts from the issue: far below the run's length.
    let read = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap();
    let p50 = read["latency"]["percentiles"].as_array().unwrap().iter().find(|p| p[0].as_f64() == Some(50.0)).unwrap()[1].as_u64().unwrap();
    assert!(p50 < 5_000_000, "read p50 {p50} ns");
    assert_eq!(doc["jobs"][0]["replay"]["lag"]["count"], 0, "no schedule, no lag");
}

#[test]
fn a_blkparse_trace_replays_reads_writes_trims_and_flushes() {
    let _one = serial();
    let d = scratch();
    let trace = d.path().join("blk.txt");
    let mut text = String::new();
    for i in 0..40u64 {
        let t = format!("0.{:09}", i * 500_000);
        let (rwbs, sector) = match i % 4 {
            0 | 1 => ("W", i * 8),
            2 => ("R", i * 8),
            _ => ("WS", 4096 + i),
        };
        text.push_str(&format!("  8,0    1 {:>8} {:>14} 4162  Q {rwbs:>3} {sector} + 8 [app]\n", i + 1, t));
        text.push_str(&format!("  8,0    1 {:>8} {:>14} 4162  C {rwbs:>3} {sector} + 8 [0]\n", i + 100, t));
    }
    text.push_str("  8,0    0      200     0.030000000  4162  Q  FN [app]\n");
    text.push_str("  8,0    0      201     0.031000000  4162  Q  DS 0 + 16 [fstrim]\n");
    text.push_str("CPU0 (8,0):\n Reads Queued: 10, 40KiB\n");
    std::fs::write(&trace, text).unwrap();
    let target = d.path().join("blk.dat");
    let r = storbench(
        d.path(),
        &[
            "replay",
            trace.to_str().unwrap(),
            "--filename",
            target.to_str().unwrap(),
            "--ioengine",
            "psync",
            "--results-dir",
            "o",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("o"));
    let n = |op: &str| ios(&doc, 0, op);
    assert_eq!((n("write"), n("read"), n("sync"), n("trim")), (30, 10, 1, 1), "{}", r.stdout);
    assert_eq!(doc["jobs"][0]["replay"]["format"], "blkparse");
    let data = std::fs::read(&target).unwrap();
    assert!(data[..8192].iter().all(|b| *b == 0), "the trim at sector 0 zeroed what the writes put there");
    assert!(data[16384..20480].iter().any(|b| *b != 0), "writes past the trim are kept");
    assert!(r.stdout.contains("replay replay:") && r.stdout.contains("(blkparse)"), "{}", r.stdout);

    // io_uring discards too (fallocate in the ring); libaio cannot.
    let u = storbench(d.path(), &["replay", trace.to_str().unwrap(), "--filename", "blk2.dat", "--results-dir", "u", "--quiet"]);
    assert_eq!(u.code, 0, "{}", u.stderr);
    assert_eq!(ios(&result_json(&d.path().join("u")), 0, "trim"), 1);
    assert!(std::fs::read(d.path().join("blk2.dat")).unwrap()[..8192].iter().all(|b| *b == 0));
    let a = storbench(d.path(), &["replay", trace.to_str().unwrap(), "--filename", "blk3.dat", "--ioengine", "libaio"]);
    assert_eq!(a.code, 2, "{}", a.stderr);
    assert!(a.stderr.contains("1 trim operations") && a.stderr.contains("psync"), "{}", a.stderr);
}

#[test]
fn a_smaller_target_wraps_the_trace_inside_it() {
    let _one = serial();
    let d = scratch();
    let log = d.path().join("big.log");
    let mut text = String::from("fio version 2 iolog\n/dev/sdz add\n/dev/sdz open\n");
    for i in 0..64u64 {
        text.push_str(&format!("/dev/sdz write {} 65536\n", i << 20));
    }
    std::fs::write(&log, text).unwrap();
    let r =
        storbench(d.path(), &["replay", log.to_str().unwrap(), "--filename", "small.dat", "--size", "1m", "--results-dir", "o", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("o"));
    assert_eq!(ios(&doc, 0, "write"), 64);
    assert_eq!(doc["jobs"][0]["replay"]["remapped"], 63, "every write but the first lies past 1 MiB");
    assert_eq!(std::fs::metadata(d.path().join("small.dat")).unwrap().len(), 1 << 20, "nothing written past the target");
}

#[test]
fn bad_traces_and_combinations_get_one_clear_error() {
    let _one = serial();
    let d = scratch();
    let bad = d.path().join("bad.log");
    std::fs::write(&bad, "fio version 3 iolog\n10 /f read 0 4096\nsoon /f read 0 4096\n").unwrap();
    let r = storbench(d.path(), &["replay", bad.to_str().unwrap(), "--filename", "x.dat", "--size", "1m"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("line 3") && r.stderr.contains("'soon'"), "{}", r.stderr);
    assert!(!d.path().join("x.dat").exists(), "nothing created for a trace that does not parse");

    let good = d.path().join("good.log");
    std::fs::write(&good, "fio version 2 iolog\n/f write 0 4096\n").unwrap();
    let r = storbench(d.path(), &["replay", good.to_str().unwrap(), "--filename", "x.dat", "--rate_iops", "100"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("rate") && r.stderr.contains("replay_time_scale"), "{}", r.stderr);

    let theirs = d.path().join("theirs.dat");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let r = storbench(d.path(), &["replay", good.to_str().unwrap(), "--filename", theirs.to_str().unwrap()]);
    assert_eq!(r.code, 2, "a trace that writes is refused on data storbench did not make: {}", r.stderr);
    assert!(r.stderr.contains("allow_overwrite"), "{}", r.stderr);
    assert!(std::fs::read(&theirs).unwrap().iter().all(|b| *b == 7));

    let r = storbench(d.path(), &["run", "--name", "x", "--replay_no_stall", "1", "--size", "1m"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("read_iolog"), "{}", r.stderr);

    let r = storbench(
        d.path(),
        &["replay", good.to_str().unwrap(), "--filename", "y.dat", "--size", "1m", "--write_iolog", good.to_str().unwrap()],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("would be overwritten"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&good).unwrap(), "fio version 2 iolog\n/f write 0 4096\n", "the trace is untouched");
    let r = storbench(
        d.path(),
        &["run", "--name", "o", "--ioengine", "null", "--objects", "10", "--number_ios", "5", "--write_iolog", "o.log"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("write_iolog records block operations"), "{}", r.stderr);

    // A production device's trace is not laid out as a file of its size.
    let far = d.path().join("far.log");
    std::fs::write(&far, "fio version 2 iolog\n/dev/sda write 107374182400 4096\n").unwrap();
    let r = storbench(d.path(), &["replay", far.to_str().unwrap(), "--filename", "new.dat"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--size") && r.stderr.contains("100"), "{}", r.stderr);
    assert!(!d.path().join("new.dat").exists());
}

/// Entries of an RGW ops log about `bucket`, one a line (RGW's file sink
/// may write two entries on one line).
fn rgw_entries(text: &str, bucket: &str) -> Vec<String> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<serde_json::Value>()
        .map(|v| v.expect("RGW's ops log is JSON"))
        .filter(|v| v["bucket"] == bucket)
        .map(|v| v.to_string())
        .collect()
}

/// Lines of a proxy log about `container`.
fn swift_entries(text: &str, container: &str) -> Vec<String> {
    let path = format!("/{container}");
    text.lines().filter(|l| l.contains(&path)).map(String::from).collect()
}

/// Operation counts and bytes a log holds, by storbench's operation names,
/// classified here from method and path (not by the parser under test).
fn expected(requests: &[(String, bool, u64, u64)]) -> std::collections::BTreeMap<&'static str, (u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for (method, has_key, status, bytes) in requests {
        let op = match (method.as_str(), *has_key) {
            _ if *status >= 400 => continue,
            ("GET", true) => "read",
            ("GET", false) => "list",
            ("PUT", true) => "create",
            ("HEAD", true) => "stat",
            ("DELETE", true) => "delete",
            _ => continue,
        };
        let e = m.entry(op).or_insert((0, 0));
        e.0 += 1;
        e.1 += if matches!(op, "read" | "create") { *bytes } else { 0 };
    }
    m
}

fn replayed(doc: &serde_json::Value) -> std::collections::BTreeMap<&'static str, (u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for op in ["read", "list", "create", "stat", "delete"] {
        let o = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == op);
        if let Some(o) = o.filter(|o| o["ios"].as_u64() > Some(0)) {
            let bytes = if matches!(op, "read" | "create") { o["bytes"].as_u64().unwrap() } else { 0 };
            m.insert(op, (o["ios"].as_u64().unwrap(), bytes));
        }
    }
    m
}

/// A workload's own record in a server's log, replayed against the server.
type Entries = fn(&str, &str) -> Vec<String>;
type Request = fn(&str) -> (String, bool, u64, u64);

fn object_round_trip(engine: &str, env: &[(&'static str, String)], log: &Path, bucket_flag: &str, select: Entries, parse: Request) {
    let d = scratch();
    let (src, dst) = (format!("sbrpl{}a", std::process::id()), format!("sbrpl{}b", std::process::id()));
    let text = captured(log, || {
        let r = storbench_env(
            d.path(),
            env,
            &[
                "run",
                "--name",
                "w",
                "--ioengine",
                engine,
                bucket_flag,
                &src,
                "--objects",
                "40",
                "--object_size",
                "4k-64k",
                "--prefill",
                "1",
            ]
            .into_iter()
            .chain(["--object_ops", "create:2,read:5,stat:1,list:1,delete:1", "--number_ios", "300", "--iodepth", "4", "--quiet"])
            .chain(["--results-dir", "orig"])
            .collect::<Vec<_>>(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    });
    let trace = d.path().join("trace.log");
    // From the first read on: the prefill's writes are left out, so the
    // replay must create the objects the log reads before it writes them.
    let entries = select(&text, &src);
    let first_read = entries.iter().position(|e| matches!(parse(e), (m, true, _, _) if m == "GET")).expect("the log has reads");
    let entries = &entries[first_read..];
    std::fs::write(&trace, entries.join("\n")).unwrap();
    let want = expected(&entries.iter().map(|e| parse(e)).collect::<Vec<_>>());
    assert!(want.get("read").is_some_and(|r| r.0 > 50) && want.contains_key("create"), "{engine}: the log holds the workload: {want:?}");
    let r = storbench_env(
        d.path(),
        env,
        &["replay", trace.to_str().unwrap(), "--ioengine", engine, bucket_flag, &dst, "--iodepth", "8", "--results-dir", "out", "--quiet"],
    );
    assert_eq!(r.code, 0, "{engine}: {}\n{}", r.stderr, r.stdout);
    let doc = result_json(&d.path().join("out"));
    assert_eq!(replayed(&doc), want, "{engine}: the replay issues what the log holds, by kind and bytes");
    assert_eq!(doc["jobs"][0]["replay"]["left"], 0);
}

fn json_request(line: &str) -> (String, bool, u64, u64) {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let method = v["uri"].as_str().unwrap().split(' ').next().unwrap().to_string();
    let n = |k: &str| v[k].as_u64().or_else(|| v[k].as_str().and_then(|s| s.parse().ok())).unwrap_or(0);
    // Pacific's entries have no object field: the key is in the URI's path.
    let path = v["uri"].as_str().unwrap().split(' ').nth(1).unwrap().split('?').next().unwrap().to_string();
    let has_key = path.trim_start_matches('/').split_once('/').is_some_and(|(_, k)| !k.is_empty());
    let bytes = if method == "PUT" { n("bytes_received").max(n("object_size")) } else { n("bytes_sent") };
    let status = if v["uri"].as_str().unwrap().contains("uploadId=") { 999 } else { n("http_status") };
    (method, has_key, status, bytes)
}

#[test]
fn an_rgw_ops_log_replays_against_rgw_with_the_same_operations() {
    let _one = serial();
    let Some(env) = s3_env() else { return };
    let log = std::path::PathBuf::from(std::env::var("STORBENCH_RGW_OPS_LOG").expect("the Ceph test env names RGW's ops log"));
    object_round_trip("s3", &env, &log, "--bucket", rgw_entries, json_request);
}

fn swift_request(line: &str) -> (String, bool, u64, u64) {
    let f: Vec<&str> = line.split_whitespace().collect();
    let at = f.iter().position(|w| w.matches('/').count() == 5 && w.contains("/20")).expect("a proxy-logging line");
    let g = &f[at - 2..];
    let path = g[4].split('?').next().unwrap().split("%3F").next().unwrap();
    let has_key = path.trim_start_matches('/').splitn(4, '/').nth(3).is_some_and(|o| !o.is_empty());
    let n = |s: &str| s.parse::<u64>().unwrap_or(0);
    // A proxy's own subrequests (source other than "-") are not the client's.
    let status = if g[16] != "-" { 999 } else { n(g[6]) };
    let bytes = if g[3] == "PUT" { n(g[10]) } else { n(g[11]) };
    (g[3].to_string(), has_key, status, bytes)
}

#[test]
fn a_swift_proxy_log_replays_against_swift_with_the_same_operations() {
    let _one = serial();
    let Some(env) = swift_env("aio") else { return };
    let log = std::path::PathBuf::from(std::env::var("STORBENCH_SWIFT_PROXY_LOG").expect("the Swift test env names its proxy log"));
    object_round_trip("swift", &env, &log, "--container", swift_entries, swift_request);
}
