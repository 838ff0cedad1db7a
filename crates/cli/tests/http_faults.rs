//! A server killed mid-run: the Swift all-in-one's proxy is stopped for two
//! seconds while storbench writes to it with two retries allowed. Operations
//! are resent (counted as retries), then fail (counted by errno); the run goes
//! on, and its results are written. And tokens invalidated mid-run (memcached
//! flushed under tempauth): renewed and the operations resent. Their own test
//! binary, so no other test meets the stopped proxy or the lost tokens (cargo
//! runs test binaries one by one; the two tests here take turns).

mod common;
use common::*;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn swift_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/testenv/swift")
}

/// The faults here must not meet each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
    let out = through_a_proxy_outage(&mut cmd, &dir);
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

/// Without retries, a proxy that refuses connections is not flooded: each
/// worker waits after every refused request (up to half a second), the
/// failures are counted and named in a warning, and once the proxy is back
/// the run's cleanup removes every object it wrote.
#[test]
fn a_refusing_server_is_backed_off_and_the_run_still_removes_its_objects() {
    let Some(env) = swift_env("aio") else { return };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::var("STORBENCH_SWIFT_DIR").unwrap_or_else(|_| "/tmp/storbench-swift".into());
    let d = scratch();
    let container = format!("sbrefuse{}", std::process::id());
    let mut cmd = Command::new(bin());
    cmd.args(["run", "--name", "k", "--ioengine", "swift", "--container", &container, "--objects", "100000", "--object_size", "4k"])
        .args(["--rw", "write", "--iodepth", "4", "--runtime", "7", "--op_timeout", "2", "--results-dir", "out", "--quiet"])
        .current_dir(d.path());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let out = through_a_proxy_outage(&mut cmd, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "failed operations make exit 1: {stderr}");
    let r = run_result(&d.path().join("out"));
    let job = &r.jobs[0];
    let refused: u64 = job.ops.iter().filter_map(|o| o.error_kinds.get(&storbench_metrics::ErrorKind::Connection)).sum();
    // Four slots, two seconds down, waits of 10, 20 ... 500 ms: a few dozen
    // tries. Without the waits this was tens of thousands a second.
    assert!(refused > 0 && refused < 400, "{refused} refused operations in a 2 s outage at iodepth 4: {:?}", job.ops);
    let warning = r.warnings.iter().chain(&job.warnings).map(|w| w.message()).find(|m| m.contains("could not connect"));
    let warning = warning.unwrap_or_else(|| panic!("a warning names the refused operations: {:?}", job.warnings));
    assert!(warning.contains(&refused.to_string()) && warning.contains("500 ms"), "{warning}");
    assert_eq!(job.objects_left, 0, "cleanup after the outage removed everything: {:?}", r.warnings);
    let (url, token) = swift_session(&env);
    let status = swift_head(&format!("{url}/{container}"), &token);
    assert_eq!(status, 404, "the container storbench created is gone too: {:?}", r.warnings);
}

/// tempauth keeps its tokens in memcached: flushing it mid-run turns every
/// token into a 401. storbench authenticates again and resends the operation,
/// so the run sees no error (the renewal shows only in that operation's latency).
#[test]
fn tokens_lost_mid_run_are_renewed_without_errors() {
    let Some(env) = swift_env("aio") else { return };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let port = std::env::var("STORBENCH_SWIFT_MEMCACHED_PORT").expect("memcached port in the Swift test env");
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let token_status = |token: &str| {
        let out = Command::new("curl")
            .args(["-s", "-I", "-o", "/dev/null", "-w", "%{http_code}", "-H", &format!("X-Auth-Token: {token}")])
            .arg(get("ST_AUTH").replace("/auth/v1.0", "/v1/AUTH_test"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let auth = Command::new("curl")
        .args([
            "-s",
            "-D",
            "-",
            "-o",
            "/dev/null",
            "-H",
            &format!("X-Auth-User: {}", get("ST_USER")),
            "-H",
            &format!("X-Auth-Key: {}", get("ST_KEY")),
        ])
        .arg(get("ST_AUTH"))
        .output()
        .unwrap();
    let headers = String::from_utf8_lossy(&auth.stdout).to_string();
    let before =
        headers.lines().find_map(|l| l.strip_prefix("X-Auth-Token: ").or(l.strip_prefix("x-auth-token: "))).unwrap().trim().to_string();
    assert_eq!(token_status(&before), "204", "a fresh token works");
    let d = scratch();
    let mut cmd = Command::new(bin());
    let container = format!("sbrenew{}", std::process::id());
    cmd.args(["run", "--name", "r", "--ioengine", "swift", "--container", &container, "--objects", "100000", "--object_size", "4k"])
        .args(["--rw", "write", "--iodepth", "4", "--runtime", "5", "--results-dir", "out", "--quiet"])
        .current_dir(d.path());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let mut mc = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    std::io::Write::write_all(&mut mc, b"flush_all\r\n").unwrap();
    let mut reply = [0u8; 4];
    std::io::Read::read_exact(&mut mc, &mut reply).unwrap();
    assert_eq!(&reply, b"OK\r\n");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(token_status(&before), "401", "the flush invalidated tokens issued before it");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc = result_json(&d.path().join("out"));
    let job = &doc["jobs"][0];
    assert_eq!(job["ops"][0]["errors"], serde_json::json!({}), "{}", job["ops"]);
    let series = job["series"].as_array().unwrap();
    let late: f64 = series
        .iter()
        .filter(|p| p["t"].as_f64().unwrap() > 2.5)
        .flat_map(|p| p["ops"].as_array().unwrap())
        .map(|o| o["iops"].as_f64().unwrap())
        .sum();
    assert!(late > 0.0, "writes went on after the flush: {series:?}");
}

/// Run `cmd` while the Swift proxy is down for two seconds of it (from its
/// second second); the proxy is restarted whatever happens.
fn through_a_proxy_outage(cmd: &mut Command, dir: &str) -> std::process::Output {
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let restart = Restart;
    let pid = std::fs::read_to_string(format!("{dir}/run/proxy.pid")).expect("proxy pid file").trim().to_string();
    assert!(Command::new("kill").arg(&pid).status().unwrap().success());
    std::thread::sleep(Duration::from_secs(2));
    drop(restart);
    child.wait_with_output().unwrap()
}
