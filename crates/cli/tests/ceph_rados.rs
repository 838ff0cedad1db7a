//! The rados engine and `storbench rados` against the real one-node cluster
//! started by scripts/testenv/ceph, with `rados bench` as the reference.
//! Without the cluster these tests skip and say why; under CI they fail.

mod common;
use common::*;
use std::process::Command;

const POOL: &str = "storbench";

fn prefix(tag: &str) -> String {
    format!("sbtest.{tag}.{}.", std::process::id())
}

fn rados(args: &[&str]) -> (bool, String) {
    let o = Command::new("rados").args(args).output().expect("run rados");
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

fn op<'a>(doc: &'a serde_json::Value, job: usize, name: &str) -> &'a serde_json::Value {
    doc["jobs"][job]["ops"].as_array().unwrap().iter().find(|o| o["op"] == name).unwrap_or_else(|| panic!("no {name} in {doc}"))
}

#[test]
fn object_mix_counts_every_operation_and_cleans_up_only_its_objects() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = prefix("mix");
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "mix",
            "--ioengine",
            "rados",
            "--pool",
            POOL,
            "--object_prefix",
            &p,
            "--objects",
            "64",
            "--object_size",
            "16k",
            "--object_ops",
            "read:60,create:10,update:10,stat:10,delete:10",
            "--rw",
            "randrw",
            "--prefill",
            "1",
            "--iodepth",
            "8",
            "--number_ios",
            "2000",
            "--results-dir",
            "out",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let total: u64 = ["read", "create", "update", "stat", "delete"].iter().map(|o| ios(&doc, 0, o)).sum();
    assert_eq!(total, 2000, "every operation counted once");
    for name in ["read", "update", "stat", "delete"] {
        assert!(ios(&doc, 0, name) > 100, "{name}: {}", ios(&doc, 0, name));
        assert_eq!(op(&doc, 0, name)["errors"], serde_json::json!({}), "{name} errors");
    }
    let read = op(&doc, 0, "read");
    assert_eq!(read["bytes"].as_u64().unwrap(), read["ios"].as_u64().unwrap() * 16384, "whole 16 KiB objects read");
    assert!(rados_objects(POOL, &p).is_empty(), "cleanup removed every object the run wrote");
}

/// Writes take librados' C++ API over storbench's own buffers (no copy)
/// when built with Ceph's C++ headers (CI installs them: there it must be
/// that path), and the C API with STORBENCH_RADOS_COPY=1; either way `rados
/// bench seq` finds every object storbench wrote holding exactly its
/// contents (it compares each byte), at queue depth 16.
#[test]
fn both_write_paths_say_which_they_are_and_write_what_rados_bench_expects() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = bench_pool("paths");
    let mut label = Vec::new();
    for (copy, out) in [("0", "nocopy"), ("1", "copy")] {
        let args = ["rados", "bench", "2", "write", "-p", &pool, "-b", "1M", "-t", "16", "--no-cleanup", "--results-dir", out];
        let w = storbench_env(d.path(), &[("STORBENCH_RADOS_COPY", copy.to_string())], &args);
        assert_eq!(w.code, 0, "{}", w.stderr);
        let doc = result_json(&d.path().join(out));
        label.push(doc["notes"].to_string());
        let written = ios(&doc, 0, "create");
        let (ok, seq) = rados(&["bench", "-p", &pool, "10", "seq", "-t", "4"]);
        assert!(ok && !seq.contains("is not correct"), "{out}: rados bench seq:\n{}", &seq[..seq.len().min(2000)]);
        assert!(seq.contains(&format!("Total reads made:     {written}")), "{out}: {seq}");
        let c = storbench(d.path(), &["rados", "cleanup", "-p", &pool]);
        assert_eq!(c.code, 0, "{}", c.stderr);
    }
    drop_pool(&pool);
    assert!(label[1].contains("writes: C API, librados copies each (STORBENCH_RADOS_COPY=1)"), "{}", label[1]);
    let no_copy = label[0].contains("writes: C++ bufferlists over storbench's buffers, no copy");
    assert!(no_copy || std::env::var_os("CI").is_none(), "CI builds the librados shim (libradospp-dev): {}", label[0]);
    if !no_copy {
        eprintln!("NOTE: built without the librados C++ shim: {}", label[0]);
    }
}

#[test]
fn kept_objects_are_refused_for_writing_and_readable_with_objects_exist() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = prefix("keep");
    let base = ["--ioengine", "rados", "--pool", POOL, "--object_prefix", &p, "--objects", "20", "--object_size", "4k"];
    let run = |extra: &[&str], out: &str| {
        let mut a = vec!["run", "--name", "k"];
        a.extend(base);
        a.extend(extra);
        a.extend(["--results-dir", out, "--quiet"]);
        storbench(d.path(), &a)
    };
    let w = run(&["--rw", "write", "--number_ios", "20", "--cleanup", "0"], "w");
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(rados_objects(POOL, &p).len(), 20, "cleanup=0 keeps the objects");
    let again = run(&["--rw", "write", "--number_ios", "20"], "again");
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("already exists") && again.stderr.contains("objects_exist=1"), "{}", again.stderr);
    let r = run(&["--rw", "randread", "--objects_exist", "1", "--number_ios", "200"], "r");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("r")), 0, "read"), 200);
    assert_eq!(rados_objects(POOL, &p).len(), 20, "objects an earlier run left stay unless cleanup=1");
    let gone = run(&["--rw", "randread", "--objects_exist", "1", "--number_ios", "10", "--cleanup", "1"], "gone");
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert!(rados_objects(POOL, &p).is_empty());
}

#[test]
fn truth_checks_refuse_oversized_objects_and_reads_of_nothing() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = prefix("truth");
    let big = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "big",
            "--ioengine",
            "rados",
            "--pool",
            POOL,
            "--object_prefix",
            &p,
            "--object_size",
            "256m",
            "--rw",
            "write",
            "--number_ios",
            "1",
        ],
    );
    assert_eq!(big.code, 2, "{}", big.stderr);
    assert!(big.stderr.contains("osd_max_object_size") && big.stderr.contains("EFBIG"), "{}", big.stderr);
    let none = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "none",
            "--ioengine",
            "rados",
            "--pool",
            POOL,
            "--object_prefix",
            &p,
            "--objects_exist",
            "1",
            "--rw",
            "randread",
            "--runtime",
            "1",
        ],
    );
    assert_eq!(none.code, 2, "{}", none.stderr);
    assert!(none.stderr.contains("does not exist") && none.stderr.contains("nothing to read"), "{}", none.stderr);
    let unwritten = storbench(
        d.path(),
        &["run", "--name", "u", "--ioengine", "rados", "--pool", POOL, "--object_prefix", &p, "--rw", "randread", "--runtime", "1"],
    );
    assert_eq!(unwritten.code, 2, "{}", unwritten.stderr);
    assert!(unwritten.stderr.contains("nothing writes first"), "{}", unwritten.stderr);
    let list =
        storbench(d.path(), &["run", "--name", "l", "--ioengine", "rados", "--pool", POOL, "--object_ops", "list", "--runtime", "1"]);
    assert_eq!(list.code, 2, "{}", list.stderr);
    assert!(list.stderr.contains("cannot list"), "{}", list.stderr);
    assert!(rados_objects(POOL, &p).is_empty(), "refused jobs wrote nothing");
}

#[test]
fn missing_pool_is_named() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let r =
        storbench(d.path(), &["run", "--name", "p", "--ioengine", "rados", "--pool", "no-such-pool", "--rw", "write", "--number_ios", "1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("pool 'no-such-pool' does not exist"), "{}", r.stderr);
}

/// Benchmarks use their own pool so that runs in parallel tests do not meet
/// in the shared metadata object.
fn bench_pool(tag: &str) -> String {
    let pool = format!("sbtest-{tag}-{}", std::process::id());
    let o = Command::new("ceph").args(["osd", "pool", "create", &pool, "8"]).output().expect("run ceph");
    assert!(o.status.success(), "creating pool {pool}: {}", String::from_utf8_lossy(&o.stderr));
    pool
}

fn drop_pool(pool: &str) {
    let _ = Command::new("ceph").args(["osd", "pool", "rm", pool, pool, "--yes-i-really-really-mean-it"]).output();
}

#[test]
fn rados_bench_modes_interoperate_with_rados_bench_both_ways() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = bench_pool("bench");
    // storbench writes, rados bench reads (and verifies the contents).
    let w =
        storbench(d.path(), &["rados", "bench", "2", "write", "-p", &pool, "-b", "64K", "-t", "4", "--no-cleanup", "--results-dir", "w"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert!(w.stdout.contains("  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)"), "{}", w.stdout);
    for field in [
        "Total writes made:",
        "Bandwidth (MB/sec):",
        "Stddev Bandwidth:",
        "Average IOPS:",
        "Average Latency(s):",
        "Max latency(s):",
        "Latency percentiles:",
    ] {
        assert!(w.stdout.contains(field), "{field} missing:\n{}", w.stdout);
    }
    let written = ios(&result_json(&d.path().join("w")), 0, "create");
    assert!(written > 20, "{written}");
    assert_eq!(show(d.path(), "w", "rados-bench"), w.stdout, "show prints the table and summary again, byte for byte");
    let (ok, out) = rados(&["bench", "-p", &pool, "5", "seq", "-t", "4"]);
    assert!(ok && !out.contains("is not correct"), "rados bench seq on storbench's objects:\n{}", &out[..out.len().min(2000)]);
    assert!(out.contains(&format!("Total reads made:     {written}")), "{out}");
    // storbench seq reads each object once.
    let s = storbench(d.path(), &["rados", "bench", "5", "seq", "-p", &pool, "-t", "4", "--results-dir", "s"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(show(d.path(), "s", "rados-bench"), s.stdout);
    assert_eq!(ios(&result_json(&d.path().join("s")), 0, "read"), written);
    let c = storbench(d.path(), &["rados", "cleanup", "-p", &pool]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains(&format!("Removed {written} objects")), "{}", c.stdout);
    assert!(rados_objects(&pool, "").is_empty(), "cleanup left {:?}", rados_objects(&pool, ""));
    // Nothing written: a clear error.
    let none = storbench(d.path(), &["rados", "bench", "1", "rand", "-p", &pool]);
    assert_eq!(none.code, 2, "{}", none.stderr);
    assert!(none.stderr.contains("no benchmark data") && none.stderr.contains("write --no-cleanup"), "{}", none.stderr);
    // rados bench writes, storbench reads.
    let (ok, out) = rados(&["bench", "-p", &pool, "2", "write", "-b", "65536", "-t", "4", "--no-cleanup"]);
    assert!(ok, "{out}");
    let r = storbench(d.path(), &["rados", "bench", "2", "rand", "-p", &pool, "-t", "4", "--results-dir", "r"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("r"));
    assert!(ios(&doc, 0, "read") > 100);
    assert_eq!(op(&doc, 0, "read")["errors"], serde_json::json!({}));
    let c = storbench(d.path(), &["rados", "cleanup", "-p", &pool]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(rados_objects(&pool, "").is_empty());
    drop_pool(&pool);
}

#[test]
fn load_gen_mixes_ranged_reads_and_writes_and_removes_its_objects() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = bench_pool("loadgen");
    let r = storbench(
        d.path(),
        &[
            "rados",
            "load-gen",
            "-p",
            &pool,
            "--num-objects",
            "50",
            "--min-object-size",
            "16k",
            "--max-object-size",
            "64k",
            "--min-op-len",
            "1k",
            "--max-op-len",
            "8k",
            "--max-ops",
            "8",
            "--read-percent",
            "70",
            "--run-length",
            "2",
            "--results-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc = result_json(&d.path().join("out"));
    let (reads, writes) = (ios(&doc, 0, "read"), ios(&doc, 0, "write"));
    assert!(reads > 0 && writes > 0);
    let share = reads as f64 / (reads + writes) as f64;
    assert!((share - 0.7).abs() < 0.1, "read share {share}");
    for name in ["read", "write"] {
        let o = op(&doc, 0, name);
        assert_eq!(o["errors"], serde_json::json!({}));
        let mean = o["bytes"].as_f64().unwrap() / o["ios"].as_f64().unwrap();
        assert!((1024.0..=8192.0).contains(&mean), "{name} mean size {mean}");
    }
    assert!(rados_objects(&pool, "").is_empty(), "load-gen removed its objects");
    drop_pool(&pool);
}

#[test]
fn fio_job_files_with_ioengine_rados_run_on_the_object_model() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let job = format!(
        "[global]\nioengine=rados\nclientname=admin\npool={POOL}\nbusy_poll=0\nsize=4m\n[w{}]\nrw=write\nbs=64k\niodepth=8\n",
        std::process::id()
    );
    std::fs::write(d.path().join("rados.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "rados.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "write"), 64, "4 MiB object in 64 KiB writes");
    assert!(rados_objects(POOL, &format!("w{}.", std::process::id())).is_empty());
}

/// `--target-throughput` is load-gen's cap in bytes per second, each
/// operation counted by its own length (64 KiB here: 640 KiB/s is 10
/// operations a second), and latency counts from each issue: it was a
/// fixed rate of 640 KiB / 4 KiB = 160 arrivals a second, latency from a
/// schedule.
#[test]
fn load_gens_target_throughput_is_a_cap_in_bytes_per_second() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = bench_pool("loadgencap");
    let args = [
        "rados",
        "load-gen",
        "-p",
        &pool,
        "--num-objects",
        "20",
        "--min-object-size",
        "64k",
        "--max-object-size",
        "128k",
        "--min-op-len",
        "64k",
        "--max-op-len",
        "64k",
        "--max-ops",
        "8",
        "--target-throughput",
        "640k",
        "--run-length",
        "3",
        "--results-dir",
        "out",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc = result_json(&d.path().join("out"));
    let job = &doc["jobs"][0];
    let bytes: f64 = job["ops"].as_array().unwrap().iter().map(|o| o["bytes_per_sec"].as_f64().unwrap()).sum();
    assert!((0.5 * 655_360.0..=1.25 * 655_360.0).contains(&bytes), "{bytes} bytes/s against a cap of 655,360");
    assert!(job["rate_per_worker"].is_null(), "a cap, not a fixed rate: {}", job["rate_per_worker"]);
    for o in job["ops"].as_array().unwrap() {
        assert!(o["service"].is_null(), "latency from the issue, no schedule: {}", o["op"]);
    }
    assert!(rados_objects(&pool, "").is_empty(), "load-gen removed its objects");
    drop_pool(&pool);
}

/// `storbench rados bench ... | head`: the per-second lines go to a reader
/// that has gone; the run goes on to its end and keeps its results (the
/// line printer panicked and the run was lost).
#[test]
fn rados_bench_into_a_closed_pipe_keeps_its_run() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = bench_pool("pipe");
    let r = into_closed_pipe(d.path(), &["rados", "bench", "2", "write", "-p", &pool, "-b", "64K", "-t", "4", "--results-dir", "w"]);
    drop_pool(&pool);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(ios(&result_json(&d.path().join("w")), 0, "create") > 0, "the run's results are kept");
}
