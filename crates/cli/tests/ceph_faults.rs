//! A cluster that stops answering mid-run: operations time out (op_timeout),
//! are counted as errors, and the results of the elapsed time are written.
//! Its own test binary, because pausing the cluster would disturb the other
//! Ceph tests (cargo runs test binaries one after another).

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

/// Unpauses the cluster however the test ends.
struct Unpause;

impl Drop for Unpause {
    fn drop(&mut self) {
        let _ = Command::new("ceph").args(["osd", "unpause"]).output();
    }
}

#[test]
fn a_paused_cluster_times_out_operations_and_the_run_still_reports() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let prefix = format!("sbfault.{}.", std::process::id());
    let child = Command::new(bin())
        .args([
            "run",
            "--name",
            "f",
            "--ioengine",
            "rados",
            "--pool",
            "storbench",
            "--object_prefix",
            &prefix,
            "--object_size",
            "64k",
            "--rw",
            "write",
            "--iodepth",
            "8",
            "--runtime",
            "8",
            "--op_timeout",
            "2",
            "--results-dir",
            "out",
            "--quiet",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let _guard = Unpause;
    assert!(Command::new("ceph").args(["osd", "pause"]).output().unwrap().status.success());
    std::thread::sleep(Duration::from_secs(4));
    drop(_guard);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "I/O errors make exit 1: {stderr}");
    let doc = result_json(&d.path().join("out"));
    let ops = doc["jobs"][0]["ops"].as_array().unwrap();
    let done: u64 = ops.iter().map(|o| o["ios"].as_u64().unwrap()).sum();
    let timed_out: u64 = ops
        .iter()
        .flat_map(|o| o["errors"].as_object().unwrap().iter())
        .filter(|(k, _)| k.starts_with("ETIMEDOUT"))
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert!(done > 50, "operations before and after the pause were measured: {done}");
    assert!(timed_out > 0, "operations during the pause timed out: {}", doc["jobs"][0]["ops"]);
    assert!(rados_objects("storbench", &prefix).is_empty(), "cleanup still removed the run's objects");
}
