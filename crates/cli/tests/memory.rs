//! Real plans run against the memory engine, which keeps what it is given
//! and does wrong what it is told to: what the null engine cannot test. An
//! interrupt mid-run keeps what was measured; injected failures are counted
//! by kind and fail the run as a real engine's do; verification finds a
//! write the store corrupted, where it was; steady state is attained on a
//! store of fixed latency.

mod common;
use common::*;
use std::time::Duration;
use storbench_model::RunResult;

/// A block job on a store of its own (each run is a process: the store
/// lives as long as the run).
fn memory_job<'a>(name: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "--name", name, "--ioengine", "memory", "--size", "4m", "--bs", "4k", "--results-dir", "out"];
    a.extend(more);
    a
}

/// Errors of every operation of job 0, by kind.
fn error_kinds(doc: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let mut all = serde_json::Map::new();
    for op in doc["jobs"][0]["ops"].as_array().unwrap() {
        for (k, n) in op["error_kinds"].as_object().into_iter().flatten() {
            let sum = all.get(k).and_then(|v| v.as_u64()).unwrap_or(0) + n.as_u64().unwrap();
            all.insert(k.clone(), sum.into());
        }
    }
    all
}

#[test]
fn an_interrupt_mid_run_keeps_what_was_measured() {
    let d = scratch();
    let args = memory_job("i", &["--rw", "randwrite", "--iodepth", "4", "--op_latency", "1ms", "--runtime", "60", "--time_based", "1"]);
    let (r, took) = signalled(d.path(), &[], &args, &[("measuring", Duration::from_secs(2), libc::SIGINT)]);
    assert!(took < Duration::from_secs(2), "exited {} ms after SIGINT:\n{}", took.as_millis(), r.stderr);
    assert_eq!(r.code, 130, "an interrupted run exits 130:\n{}", r.stderr);
    let res: RunResult = run_result(&d.path().join("out"));
    let j = &res.jobs[0];
    assert!(res.interrupted && j.interrupted, "the results say the run was interrupted");
    let secs = j.runtime_ns as f64 / 1e9;
    assert!((1.0..10.0).contains(&secs), "the job's runtime is the time it ran before the signal: {secs} s");
    let w = j.ops.iter().find(|o| o.op == storbench_workload::OpKind::Write).expect("writes measured");
    assert!(w.ios > 100 && w.errors.is_empty(), "writes of the elapsed seconds are kept: {} ios", w.ios);
    assert!(w.latency.min_ns >= 1_000_000, "every write took the store's 1 ms at least: min {} ns", w.latency.min_ns);
    assert!(!j.series.is_empty(), "the per-second points measured are kept");
}

#[test]
fn injected_failures_are_counted_by_kind_and_fail_the_run() {
    let d = scratch();
    let args =
        memory_job("f", &["--rw", "randrw", "--iodepth", "8", "--number_ios", "1000", "--fail_every", "10", "--fail_kind", "timeout"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 1, "per-I/O errors fail the run, as on any engine: {}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    assert_eq!(error_kinds(&doc), serde_json::json!({"timeout": 100}).as_object().unwrap().clone(), "every 10th of 1000 operations");
    assert_eq!(ios(&doc, 0, "read") + ios(&doc, 0, "write"), 900, "the other 900 completed");

    let d = scratch();
    let args = memory_job(
        "g",
        &["--rw", "randrw", "--iodepth", "4", "--number_ios", "600", "--fail_every", "3", "--fail_kind", "not_found", "--fail_ops", "read"],
    );
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let write = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "write").unwrap().clone();
    assert_eq!(write["error_kinds"], serde_json::json!({}), "writes are not among fail_ops");
    let failed = error_kinds(&doc)["not_found"].as_u64().unwrap();
    let reads = ios(&doc, 0, "read") + failed;
    assert_eq!(failed, reads / 3, "every third of {reads} reads fails, as not found");
}

#[test]
fn object_failures_are_counted_as_a_store_would_report_them() {
    let d = scratch();
    let args = [
        "run",
        "--name",
        "o",
        "--ioengine",
        "memory",
        "--objects",
        "50",
        "--object_size",
        "4k",
        "--object_ops",
        "read:50,create:30,stat:20",
        "--rw",
        "randrw",
        "--prefill",
        "1",
        "--iodepth",
        "4",
        "--number_ios",
        "500",
        "--fail_every",
        "5",
        "--fail_kind",
        "refused",
        "--fail_ops",
        "stat",
        "--results-dir",
        "out",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let failed = error_kinds(&doc)["connection"].as_u64().unwrap();
    let stats = ios(&doc, 0, "stat") + failed;
    assert!(stats > 0);
    assert_eq!(error_kinds(&doc).len(), 1, "only stats fail: {:?}", error_kinds(&doc));
    assert_eq!(failed, stats / 5, "every fifth of {stats} stats is refused");
}

#[test]
fn verification_finds_the_writes_the_store_corrupted() {
    let d = scratch();
    let args = memory_job("v", &["--size", "1m", "--rw", "write", "--iodepth", "4", "--verify", "crc32c", "--corrupt_every", "64"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 1, "a verify failure fails the run: {}", r.stderr);
    assert!(r.stdout.contains("VERIFY FAILED"), "{}", r.stdout);
    let doc = result_json(&d.path().join("out"));
    let v = &doc["jobs"][0]["verify"];
    assert_eq!(v["failed"], serde_json::json!([4, 0, 0, 0]), "256 writes, every 64th corrupted: {v}");
    let first = &v["failures"][0];
    // The 64th write of a sequential job is the block at 63 * 4 KiB; the byte flipped is its middle one.
    assert_eq!(
        (first["kind"].as_str(), first["offset"].as_u64(), first["byte"].as_u64()),
        (Some("corrupt"), Some(63 * 4096), Some(2048)),
        "{v}"
    );

    // Objects: every 4th of 16 creates stored with its middle byte flipped.
    let d = scratch();
    let args =
        ["run", "--name", "o", "--ioengine", "memory", "--objects", "16", "--object_size", "8k", "--rw", "write", "--verify", "crc32c"];
    let r = storbench(d.path(), &[&args[..], &["--corrupt_every", "4", "--number_ios", "16", "--results-dir", "out"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = &result_json(&d.path().join("out"))["jobs"][0]["verify"];
    assert_eq!(v["failed"], serde_json::json!([4, 0, 0, 0]), "{v}");
    assert_eq!(
        (v["failures"][0]["byte"].as_u64(), v["failures"][0]["target"].as_str().map(|t| t.ends_with("key 3"))),
        (Some(4096), Some(true)),
        "{v}"
    );

    let d = scratch();
    let clean = storbench(d.path(), &memory_job("c", &["--size", "1m", "--rw", "randwrite", "--iodepth", "4", "--verify", "crc32c"]));
    assert_eq!(clean.code, 0, "the same store without corruption verifies clean: {}", clean.stderr);
}

/// On IOPS as fio 3.33 judges it, and on mean latency as fio's newer `lat`
/// (and storbench's p99): a store that always takes 2 ms is steady by each.
#[test]
fn steady_state_is_attained_on_a_store_of_fixed_latency() {
    for criterion in ["iops:20%", "lat:10%", "lat_slope:2%", "p99:20%"] {
        let d = scratch();
        let mut more = vec!["--rw", "randwrite", "--iodepth", "4", "--op_latency", "2ms", "--runtime", "30", "--time_based", "1"];
        more.extend(["--ss", criterion, "--ss_ramp", "1", "--ss_dur", "3"]);
        let r = storbench(d.path(), &memory_job("s", &more));
        assert_eq!(r.code, 0, "{criterion}: {}", r.stderr);
        let res = run_result(&d.path().join("out"));
        let j = &res.jobs[0];
        let ss = j.steady_state.as_ref().expect("a verdict");
        assert!(ss.attained, "{criterion}: a store that always takes 2 ms is steady: {ss:?}");
        assert!(j.runtime_ns < 20_000_000_000, "{criterion}: the job ended at steady state, not at 30 s: {} ns", j.runtime_ns);
    }
}

#[test]
fn reads_of_a_store_never_written_are_said_to_be_so() {
    let d = scratch();
    let r = storbench(d.path(), &memory_job("r", &["--rw", "randread", "--number_ios", "200"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let never = res.jobs[0].warnings.iter().find_map(|w| match w {
        storbench_model::Warning::NeverWrittenReads { never_written, size, .. } => Some((*never_written, *size)),
        _ => None,
    });
    assert_eq!(never, Some((4 << 20, 4 << 20)), "a fresh store's bytes were all never written: {:?}", res.jobs[0].warnings);

    // Written by an earlier group of the same run, the same store is not.
    let d = scratch();
    let args = [
        "run",
        "--ioengine",
        "memory",
        "--size",
        "4m",
        "--bs",
        "64k",
        "--results-dir",
        "out",
        "--name",
        "w",
        "--rw",
        "write",
        "--name",
        "r",
        "--rw",
        "randread",
        "--stonewall",
        "1",
        "--number_ios",
        "200",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let reader = res.jobs.iter().find(|j| j.name == "r").expect("the reading job");
    assert!(!reader.warnings.iter().any(|w| matches!(w, storbench_model::Warning::NeverWrittenReads { .. })), "{:?}", reader.warnings);
}

#[test]
fn a_write_is_timed_from_when_the_store_takes_it_not_from_before_its_data_was_made() {
    // 256 KiB writes verified with sha256: each write's data is made and
    // hashed first (milliseconds), then the store copies it (a fraction of
    // that). fio takes an I/O's issue time after its buffer is filled, just
    // before the engine has it: the making of the data is the tool's work,
    // not the store's, and was counted as the write's latency.
    let d = scratch();
    #[rustfmt::skip]
    let args = [
        "run", "--results-dir", "out", "--name", "v", "--ioengine", "memory", "--size", "4m", "--bs", "256k",
        "--rw", "write", "--time_based", "1", "--runtime", "1", "--verify", "sha256", "--do_verify", "0",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let j = &res.jobs[0];
    let w = j.ops.iter().find(|o| o.op == storbench_workload::OpKind::Write).expect("writes measured");
    let p50 = w.latency.percentiles.iter().find(|(p, _)| *p == 50.0).expect("a p50").1;
    let made = j.verify.as_ref().expect("verified").tally.cpu_ns / w.ios.max(1);
    assert!(w.ios >= 4 && made > 0, "{} writes, {made} ns to make each", w.ios);
    assert!(p50 < made / 2, "a write's p50 is the store's copy alone: {p50} ns, while making its data took {made} ns");
}
