//! A server killed mid-run: the Swift all-in-one's proxy is stopped for two
//! seconds while storbench writes to it with two retries allowed. Operations
//! are resent (counted as retries), then fail (counted by errno); the run goes
//! on, and its results are written. Its own test binary, so no
//! other test meets the stopped proxy (cargo runs test binaries one by one).

mod common;
use common::*;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn swift_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/testenv/swift")
}

/// Brings the proxy back however the test ends.
struct Restart;

impl Drop for Restart {
    fn drop(&mut self) {
        let _ = Command::new(swift_script()).arg("up").output();
    }
}

#[test]
fn a_killed_proxy_fails_operations_and_the_run_still_reports() {
    let Some(env) = swift_env("aio") else { return };
    let dir = std::env::var("STORBENCH_SWIFT_DIR").unwrap_or_else(|_| "/tmp/storbench-swift".into());
    let d = scratch();
    let mut cmd = Command::new(bin());
    cmd.args([
        "run",
        "--name",
        "k",
        "--ioengine",
        "swift",
        "--container",
        &format!("sbkill{}", std::process::id()),
        "--objects",
        "100000",
        "--object_size",
        "4k",
        "--rw",
        "write",
        "--iodepth",
        "4",
        "--runtime",
        "7",
        "--op_timeout",
        "2",
        "--retries",
        "2",
        "--results-dir",
        "out",
        "--quiet",
    ])
    .current_dir(d.path());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let restart = Restart;
    let pid = std::fs::read_to_string(format!("{dir}/run/proxy.pid")).expect("proxy pid file").trim().to_string();
    assert!(Command::new("kill").arg(&pid).status().unwrap().success());
    std::thread::sleep(Duration::from_secs(2));
    drop(restart);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "failed operations make exit 1: {stderr}");
    let doc = result_json(&d.path().join("out"));
    let ops = doc["jobs"][0]["ops"].as_array().unwrap();
    let done: u64 = ops.iter().map(|o| o["ios"].as_u64().unwrap()).sum();
    let failed: u64 = ops.iter().flat_map(|o| o["errors"].as_object().unwrap().values()).map(|n| n.as_u64().unwrap()).sum();
    assert!(done > 20, "operations before and after the outage were measured: {done}");
    assert!(failed > 0, "operations during the outage failed: {}", doc["jobs"][0]["ops"]);
    let retries: u64 = ops.iter().map(|o| o["retries"].as_u64().unwrap()).sum();
    // Failures of the retryable kinds (refused, reset, timed out) were each
    // sent twice more before they counted; others were not resent.
    let retryable: u64 = ops
        .iter()
        .flat_map(|o| o["errors"].as_object().unwrap().iter())
        .filter(|(k, _)| ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "HTTP 50"].iter().any(|r| k.starts_with(r)))
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert!(retryable > 0 && retries >= 2 * retryable, "{retries} retries for {retryable} retryable failures: {}", doc["jobs"][0]["ops"]);
    let series = doc["jobs"][0]["series"].as_array().unwrap();
    assert!(series.len() >= 6, "per-second points cover the whole run: {}", series.len());
}
