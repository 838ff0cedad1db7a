//! Failures by kind, and what a failure does to the object model: the same
//! missing object is "not found" on RADOS (ENOENT) and on S3 (HTTP 404), and
//! an object whose PUT failed is never read afterwards (no false 404s).

mod common;
use common::*;
use std::collections::BTreeMap;
use storbench_metrics::ErrorKind;
use storbench_workload::OpKind;

/// Reads of four keys of which only the first exists, on one engine: the
/// read failures by kind and by detail.
fn missing_object_reads(
    d: &std::path::Path,
    engine: &[&str],
    env: &[(&'static str, String)],
) -> (BTreeMap<ErrorKind, u64>, BTreeMap<String, u64>) {
    let prefix = format!("sbkind{}.", std::process::id());
    let run = |name: &str, extra: &[&str]| {
        let mut a = vec!["run", "--name", name];
        a.extend_from_slice(engine);
        a.extend(["--object_prefix", &prefix, "--object_size", "4k", "--results-dir", name, "--quiet"]);
        a.extend_from_slice(extra);
        storbench_env(d, env, &a)
    };
    let w = run("w", &["--objects", "1", "--rw", "write", "--number_ios", "1", "--cleanup", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let r = run(
        "r",
        &["--objects", "4", "--objects_exist", "1", "--object_ops", "read", "--rw", "read", "--number_ios", "8", "--cleanup", "0"],
    );
    assert_eq!(r.code, 1, "missing objects are I/O errors: {}", r.stderr);
    let c = run(
        "c",
        &["--objects", "1", "--objects_exist", "1", "--object_ops", "stat", "--rw", "read", "--number_ios", "1", "--cleanup", "1"],
    );
    assert_eq!(c.code, 0, "{}", c.stderr);
    let result = run_result(&d.join("r"));
    let read = result.jobs[0].op(OpKind::Read).expect("reads");
    assert_eq!(read.ios, 2, "key 0, twice");
    (read.error_kinds.clone(), read.errors.clone())
}

#[test]
fn a_missing_object_is_not_found_on_rados_and_on_s3() {
    let Some(s3) = s3_env() else { return };
    let d = scratch();
    let bucket = format!("sbkind{}", std::process::id());
    // Each engine's runs in a directory of their own (results are never replaced).
    let (rados, s3_dir) = (d.path().join("rados"), d.path().join("s3"));
    std::fs::create_dir_all(&rados).unwrap();
    std::fs::create_dir_all(&s3_dir).unwrap();
    let (rados_kinds, rados_details) = missing_object_reads(&rados, &["--ioengine", "rados", "--pool", "storbench"], &[]);
    let (s3_kinds, s3_details) = missing_object_reads(&s3_dir, &["--ioengine", "s3", "--bucket", &bucket], &s3);
    let six_not_found = BTreeMap::from([(ErrorKind::NotFound, 6)]);
    assert_eq!((&rados_kinds, &s3_kinds), (&six_not_found, &six_not_found), "the same failures line up by kind");
    assert_eq!(rados_details, BTreeMap::from([("ENOENT (No such file or directory)".to_string(), 6)]));
    assert_eq!(s3_details, BTreeMap::from([("HTTP 404".to_string(), 6)]), "each keeps the storage's own words");
}

/// Swift refuses object names longer than 1024 bytes: with a 1022-byte
/// prefix, keys 0..99 can be created and keys from 100 up cannot (HTTP 400).
/// After 50 objects written first, reads go only to objects that exist,
/// never to keys whose PUT failed, and cleanup removes exactly the objects
/// there are.
#[test]
fn a_failed_put_leaves_no_object_behind_to_read() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    let prefix = "p".repeat(1022);
    let container = format!("sbfail{}", std::process::id());
    let r = storbench_env(
        d.path(),
        &env,
        &[
            "run",
            "--name",
            "f",
            "--ioengine",
            "swift",
            "--container",
            &container,
            "--objects",
            "300",
            "--object_size",
            "4k",
            "--initial_objects",
            "50",
            "--object_ops",
            "create:1,read:2",
            "--rw",
            "randrw",
            "--object_prefix",
            &prefix,
            "--iodepth",
            "4",
            "--number_ios",
            "2000",
            "--results-dir",
            "out",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 1, "the failed PUTs are I/O errors: {}", r.stderr);
    let result = run_result(&d.path().join("out"));
    let job = &result.jobs[0];
    assert!(job.failures.is_empty(), "cleanup found every object it removed: {:?}", job.failures);
    let create = job.op(OpKind::Create).expect("creates");
    assert_eq!(create.ios, 50, "keys 50 to 99 (0 to 49 were written first)");
    assert!(create.errors.get("HTTP 400").copied().unwrap_or(0) > 0, "{:?}", create.errors);
    let read = job.op(OpKind::Read).expect("reads");
    assert!(read.ios > 500, "{}", read.ios);
    assert!(read.errors.is_empty(), "no read went to an object whose PUT failed: {:?}", read.errors);
    let (url, token) = swift_session(&env);
    assert_eq!(swift_head(&format!("{url}/{container}"), &token), 404, "the container storbench made is gone");
}
