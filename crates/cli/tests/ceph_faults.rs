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

/// A run killed with SIGKILL leaves its image's exclusive lock and watch
/// behind, and the next run's first writes wait (about 25 s here) until the
/// watch times out. storbench names the holder before the run, with the
/// command that clears it; the command works; and when nobody clears it,
/// the first operations are flagged in the results.
#[test]
fn a_stale_rbd_lock_is_named_with_its_command_and_a_wait_on_it_is_flagged() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = std::env::var("STORBENCH_RBD_POOL").unwrap_or_else(|_| "rbd".into());
    let image = format!("sbstale{}", std::process::id());
    let job = |out: &str, rw: &str, runtime: &str| -> Vec<String> {
        ["run", "--name", "s", "--ioengine", "rbd", "--pool", &pool, "--rbdname", &image, "--size", "64m", "--rw", rw]
            .iter()
            .chain(&["--iodepth", "8", "--runtime", runtime, "--results-dir", out])
            .map(|s| s.to_string())
            .collect()
    };
    let run = |out: &str, runtime: &str| job(out, "randwrite", runtime);
    let kill_a_run = |out: &str| {
        let mut child = Command::new(bin())
            .args(run(out, "60"))
            .current_dir(d.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(3));
        crash(child.id());
        child.wait().unwrap();
    };

    // Named, with the command that clears it (by a run that only reads, so
    // it does not take the lock over itself); after the command, no wait.
    kill_a_run("killed1");
    let named = storbench(d.path(), &words(&job("named", "randread", "1")));
    let line = named.stderr.lines().find(|l| l.contains("is locked by")).unwrap_or_else(|| panic!("the holder is named: {}", named.stderr));
    let command = line.split('`').find(|c| c.starts_with("rbd lock rm")).unwrap_or_else(|| panic!("with the command: {line}"));
    let status = Command::new("sh").arg("-c").arg(command).status().unwrap();
    assert!(status.success(), "`{command}` clears the lock");
    let clear = storbench(d.path(), &words(&run("clear", "2")));
    assert_eq!(clear.code, 0, "{}", clear.stderr);
    assert!(!clear.stderr.contains("is locked by"), "{}", clear.stderr);
    let r = run_result(&d.path().join("clear"));
    assert!(r.jobs[0].op(storbench_workload::OpKind::Write).unwrap().latency.max_ns < 5_000_000_000, "no write waited");

    // Not cleared: the first writes wait, and that is flagged.
    kill_a_run("killed2");
    let waited = storbench(d.path(), &words(&run("waited", "1")));
    let r = run_result(&d.path().join("waited"));
    let flag = r.jobs[0].warnings.iter().find_map(|w| match w {
        storbench_model::Warning::FirstOpsWaited { waited_ns, held_by, .. } => Some((*waited_ns, held_by.clone())),
        _ => None,
    });
    let (waited_ns, held_by) = flag.unwrap_or_else(|| panic!("the wait is flagged: {:?}\n{}", r.jobs[0].warnings, waited.stderr));
    assert!(waited_ns > 5_000_000_000 && held_by.contains("rbd lock rm"), "{waited_ns} ns: {held_by}");
    let _ = Command::new("rbd").args(["rm", "--no-progress", &format!("{pool}/{image}")]).output();
}

fn words(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
