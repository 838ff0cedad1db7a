//! A server killed mid-run: the Swift all-in-one's proxy is stopped for two
//! seconds while storbench writes to it with two retries allowed. Operations
//! are resent (counted as retries), then fail (counted by errno); the run goes
//! on, and its results are written. And tokens invalidated mid-run (memcached
//! flushed under tempauth): renewed and the operations resent. Their own test
//! binary, so no other test meets the stopped proxy or the lost tokens (cargo
//! runs test binaries one by one; the two tests here take turns). And a
//! store that stops answering (a small S3 and Swift server the test runs,
//! `common::store`): the run ends on time, its cleanup gives up within its
//! bound naming what is left, and a Ctrl-C meanwhile is answered at once.

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

/// A run against a store the test starts (S3 or Swift), which stops
/// answering 1.5 s into the measured phase: it accepts and reads every
/// request from then on and answers none. `second` acts when the cleanup
/// begins (after `after`). The run's output, how long it went on after
/// that, the measured phase's length as seen from outside, the result.
fn hung_mid_run(engine: &str, out: &str, after: Duration, second: Act) -> (Run, Duration, Duration, storbench_model::RunResult) {
    let d = scratch();
    let store = common::store::Store::start();
    let (env, place) = match engine {
        "s3" => (store.s3_env(), "--bucket"),
        _ => (store.swift_env(), "--container"),
    };
    let a = ["run", "--name", "h", "--ioengine", engine, place, "hung", "--object_prefix", "p.", "--objects", "100000"];
    let a = [&a[..], &["--object_size", "4k", "--rw", "write", "--iodepth", "8", "--runtime", "4", "--results-dir", out]].concat();
    let hung_at = std::cell::Cell::new(None);
    let hang = |_: i32| {
        store.hang();
        hung_at.set(Some(std::time::Instant::now()));
    };
    let cleanup_at = std::cell::Cell::new(None);
    let act = |pid: i32| {
        cleanup_at.set(Some(std::time::Instant::now() - after));
        second(pid)
    };
    let steps: [(&str, Duration, Act); 2] = [("measuring", Duration::from_millis(1500), &hang), ("removing the objects", after, &act)];
    let (r, took) = staged(d.path(), &env, &a, &steps, Duration::from_secs(40));
    let measured = cleanup_at.get().unwrap() - hung_at.get().unwrap() + Duration::from_millis(1500);
    eprintln!(
        "{engine}: the 4 s measured phase took {} ms; the run went on {} ms after the cleanup began",
        measured.as_millis(),
        took.as_millis()
    );
    let result = run_result(&d.path().join(out));
    let left = result.jobs[0].objects_left;
    assert!(left > 0 && left as usize >= store.objects("hung", "p.").len(), "{left} left: {:?}", result.warnings);
    (r, took, measured, result)
}

/// A store that stops answering mid-run (accepts, then never replies): the
/// measured phase still ends on time (before: stretched by op_timeout, 30 s,
/// with IOPS averaged over the stretched time), what was in flight is cut
/// off and said so, and the cleanup gives up after 10 s without an answer
/// (before: 30 s per batch of deletes, no results after 150 s), naming what
/// is left with the command that removes it.
#[test]
fn a_store_that_stops_answering_ends_the_run_on_time_and_cleanup_gives_up_naming_what_is_left() {
    for engine in ["s3", "swift"] {
        let nothing = |_: i32| {};
        let (r, took, measured, res) = hung_mid_run(engine, "alone", Duration::ZERO, &nothing);
        eprintln!(
            "FAULT | {engine} | measured, then cleanup | store hung | cleanup gave up {} ms after it began | exit {}",
            took.as_millis(),
            r.code
        );
        assert!(measured < Duration::from_millis(5800), "{engine}: the 4 s phase lasted {measured:?}: {}", r.stderr);
        assert!(took < Duration::from_secs(13), "{engine}: the cleanup went on {took:?}: {}", r.stderr);
        assert_eq!(r.code, 1, "{engine}: a cleanup that gave up is a failure: {}", r.stderr);
        let j = &res.jobs[0];
        assert!(j.runtime_ns <= 4_050_000_000, "{engine}: not stretched: {} ns", j.runtime_ns);
        assert!(j.cut_off > 0, "{engine}: what was in flight is cut off: {:?}", j.warnings);
        let create = j.op(storbench_workload::OpKind::Create).expect("creates before the hang");
        assert!(create.ios > 0 && (create.iops * j.runtime_ns as f64 / 1e9 - create.ios as f64).abs() < 1.0, "IOPS over the measured time");
        assert!(j.failures.iter().any(|f| f.contains("stopped answering")), "{engine}: {:?}", j.failures);
        let note = res.warnings.iter().map(|w| w.message()).find(|m| m.contains("were not removed")).expect("the leftovers are named");
        assert!(note.contains(&format!("{} objects", j.objects_left)) && note.contains("storbench cleanup --ioengine"), "{note}");
    }
}

/// The same store, and a Ctrl-C while the cleanup waits on it: the run
/// ends within a second (exit 130), what is left listed.
#[test]
fn a_ctrl_c_while_cleanup_waits_on_a_store_that_stopped_answering_ends_the_run_at_once() {
    for engine in ["s3", "swift"] {
        let interrupt = |pid: i32| signal(pid, libc::SIGINT);
        let (r, took, _, res) = hung_mid_run(engine, "ctrlc", Duration::from_secs(1), &interrupt);
        eprintln!("INTERRUPT | {engine} | cleanup, store hung | SIGINT | {} ms | exit {}", took.as_millis(), r.code);
        assert!(took < EXIT_WITHIN, "{engine}: exited {} ms after SIGINT: {}", took.as_millis(), r.stderr);
        assert_eq!(r.code, 130, "{engine}: {}", r.stderr);
        assert!(res.warnings.iter().any(|w| w.message().contains("storbench cleanup")), "{engine}: {:?}", res.warnings);
    }
}
