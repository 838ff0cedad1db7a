//! A cluster that stops answering mid-run: operations time out (op_timeout),
//! are counted as errors, and the results of the elapsed time are written;
//! a stale lock; an OSD out and in again mid-run; faults as commands. Its
//! own test binary, because pausing the cluster would disturb the other
//! Ceph tests (cargo runs test binaries one after another); within it the
//! tests that disturb the cluster take turns ([`one_at_a_time`]).

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

/// The tests that pause the cluster, hold an image's lock or take an OSD
/// out would disturb each other's figures: one at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CLUSTER.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let _turn = one_at_a_time();
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
    let _turn = one_at_a_time();
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

/// Puts an OSD back in however the test ends, and waits (bounded) until
/// every PG is active+clean again, so later tests find a healthy cluster.
struct BackIn(&'static str);

impl Drop for BackIn {
    fn drop(&mut self) {
        let _ = Command::new("ceph").args(["osd", "in", self.0]).output();
        let clean = || {
            let out = Command::new("ceph").args(["pg", "stat", "-f", "json"]).output().map(|o| o.stdout).unwrap_or_default();
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
            let total = v["pg_summary"]["num_pgs"].as_u64();
            let states = v["pg_summary"]["num_pg_by_state"].as_array().cloned().unwrap_or_default();
            let ok = states.iter().filter(|s| s["name"] == "active+clean").filter_map(|s| s["num"].as_u64()).sum::<u64>();
            total.is_some_and(|t| t == ok)
        };
        let began = std::time::Instant::now();
        while !clean() && began.elapsed() < Duration::from_secs(90) {
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// Issue 30's failure check: an OSD out at 5 s and in again at 15 s under a
/// 30 s RBD write run, with the manager's prometheus module scraped beside
/// it. The run completes, each fault is carried out through the monitors
/// and recorded, the clients' figures before, during and after are kept,
/// the cluster's own counters (watched on the run's axis) show the OSD out
/// and a recovery, named as such; the exporter's series sit on the client
/// host's seconds; and the report shows it all on one axis.
#[test]
fn an_osd_out_and_back_in_mid_run_is_survived_and_assessed() {
    if !ceph_cluster() {
        return;
    }
    let _turn = one_at_a_time();
    let d = scratch();
    let _back = BackIn("2");
    let img = format!("sbfault-{}", std::process::id());
    let prometheus = std::env::var("STORBENCH_CEPH_PROMETHEUS").expect("scripts/testenv/ceph's env names the manager's exporter");
    let args = [
        "run",
        "--name",
        "f",
        "--ioengine",
        "rbd",
        "--pool",
        "rbd",
        "--rbdname",
        &img,
        "--size",
        "64m",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--runtime",
        "30",
        "--time_based",
        "1",
        "--fault",
        "5s:osd-out:2",
        "--fault",
        "15s:osd-in:2",
        "--watch-ceph",
        "--scrape",
        &prometheus,
        "--scrape-keep",
        "ceph_osd_op_w*,ceph_osd_apply_latency_ms,ceph_pg_*",
        "--results-dir",
        "out",
        "--quiet",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let res = run_result(&d.path().join("out"));
    let dis = res.disruption.as_ref().expect("the faults' figures");
    let done: Vec<(String, f64, bool)> = dis.events.iter().map(|e| (e.action.words(), e.at_s, e.error.is_none())).collect();
    assert_eq!(done, [("osd-out:2".to_string(), 5.0, true), ("osd-in:2".to_string(), 15.0, true)], "{:?}", dis.events);
    assert!(dis.events.iter().all(|e| e.done_s >= e.at_s && e.done_s < e.at_s + 5.0), "carried out on time: {:?}", dis.events);
    let (before, after) = (dis.before.as_ref().unwrap(), dis.after.as_ref().unwrap());
    assert!(before.ops_per_s > 0.0 && after.ops_per_s > 0.0 && dis.during.is_some(), "{dis:?}");
    // The cluster's counters, on the run's seconds: the OSD out, then in again.
    let t = res.telemetry.as_ref().unwrap();
    let cluster = t.sources.iter().find(|s| s.kind == storbench_model::telemetry::SourceKind::Cluster).expect("the cluster watched");
    let osds_in: Vec<f64> = cluster.get("cluster_osds_in").expect("OSDs in").present().collect();
    assert!(osds_in.contains(&2.0) && osds_in.last() == Some(&3.0), "out, then in: {osds_in:?}");
    assert!(cluster.t.iter().all(|s| s.fract() == 0.0) && cluster.t.len() >= 25, "whole seconds of the run: {:?}", cluster.t);
    assert!(cluster.all("osd_commit_latency_ms").count() >= 3, "each OSD's latency");
    let [from, to] = dis.cluster_recovery_s.expect("degraded objects while the OSD was out");
    assert!(from >= 5.0 && to >= from, "{from}..{to}");
    assert!(r.stdout.contains("fault osd-out:2 at 5.0 s") && r.stdout.contains("cluster ceph"), "{}", r.stdout);
    // The recovery named as what the clients shared the cluster with, from its own counters.
    let named = res.warnings.iter().find_map(|w| match w {
        storbench_model::Warning::ClusterRecovering { from_s, seconds, .. } => Some((*from_s, *seconds)),
        _ => None,
    });
    assert!(named.is_some_and(|(f, n)| f >= 4.0 && n >= 2), "recovery named: {:?}", res.warnings);
    // The exporter's series: rates of its counters, per OSD, on the client's own seconds.
    let exporter = t.sources.iter().find(|s| s.kind == storbench_model::telemetry::SourceKind::Exporter).expect("the exporter scraped");
    let local = t.sources.iter().find(|s| s.name == "local").expect("the client host");
    let shared = exporter.t.iter().filter(|s| local.t.contains(s)).count();
    assert!(exporter.t.len() >= 25 && shared + 1 >= exporter.t.len(), "aligned: {:?} against {:?}", exporter.t, local.t);
    let writes: f64 = exporter.all("ceph_osd_op_w_per_s").filter_map(|s| s.max()).sum();
    assert!(writes > 0.0 && exporter.all("ceph_osd_op_w_per_s").count() == 3, "each OSD's writes a second");
    assert!(exporter.all("ceph_osd_op_w_latency_mean").any(|s| s.max().is_some_and(|v| v > 0.0)), "OSD write latency");
    assert!(exporter.get("ceph_osd_op_w").is_none() && exporter.all("ceph_pool_wr_per_s").count() == 0, "kept as asked");
    assert!(r.stdout.contains("exporter 127.0.0.1:"), "{}", r.stdout);
    let html = storbench(d.path(), &["report", "out", "-o", "r.html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let page = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(page.contains("Faults") && page.contains("osd-out:2") && page.contains("cluster ceph"), "the report shows the faults");
    assert!(page.contains("clients: operations per second on the run") && page.contains("exporter 127.0.0.1:"), "one timeline, stacked");
}

/// An OSD the schedule took out and never put back is put back in when the
/// run ends: a benchmark leaves the cluster as it found it (the monitors'
/// `osd dump` says it is in again), and the summary says it was done.
#[test]
fn an_osd_the_run_took_out_is_put_back_in_when_it_ends() {
    if !ceph_cluster() {
        return;
    }
    let _turn = one_at_a_time();
    let d = scratch();
    let _back = BackIn("1");
    let prefix = format!("sbrestore.{}.", std::process::id());
    let args = [
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
        "4k",
        "--rw",
        "write",
        "--iodepth",
        "4",
        "--runtime",
        "5",
        "--time_based",
        "1",
        "--fault",
        "2s:osd-out:1",
        "--results-dir",
        "out",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let dump = Command::new("ceph").args(["osd", "dump", "-f", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    let one = v["osds"].as_array().unwrap().iter().find(|o| o["osd"] == 1).cloned().unwrap();
    assert_eq!(one["in"], 1, "osd.1 is in again: {one}");
    let dis = run_result(&d.path().join("out")).disruption.expect("the faults");
    let restored: Vec<_> = dis.events.iter().filter(|e| e.restores).collect();
    assert_eq!(restored.len(), 1, "{:?}", dis.events);
    assert!(restored[0].action.words() == "osd-in:1" && restored[0].error.is_none() && restored[0].at_s >= 5.0, "{:?}", restored[0]);
    assert!(dis.after.is_some() || dis.during.is_some(), "the restore is not taken for a fault of the schedule: {dis:?}");
    assert!(r.stdout.contains("at the run's end, osd-in:1 to undo the run's own fault"), "{}", r.stdout);
}

/// A command at a time of a run (only with --allow-exec): carried out at
/// its time, its answer kept; one that fails is recorded, and the run goes
/// on; one due after the run's end is listed as not carried out.
#[test]
fn a_command_fault_runs_at_its_time_and_a_late_one_is_not_reached() {
    let d = scratch();
    let common = ["run", "--name", "x", "--filename", "f.dat", "--size", "4m", "--rw", "randread", "--bs", "4k", "--runtime", "5"];
    let run = |more: &[&str], out: &str| {
        storbench(d.path(), &[&common[..], more, &["--time_based", "1", "--quiet", "--results-dir", out]].concat())
    };
    let refused = run(&["--fault", "1s:exec:touch marker"], "no");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("needs --allow-exec"), "{}", refused.stderr);
    assert!(!d.path().join("marker").exists() && !d.path().join("no").exists(), "nothing ran, nothing written");
    let r = run(
        &["--fault", "1s:exec:touch marker; echo made", "--fault", "2s:exec:exit 4", "--fault", "30s:exec:touch late", "--allow-exec"],
        "out",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(d.path().join("marker").exists() && !d.path().join("late").exists());
    let res = run_result(&d.path().join("out"));
    let dis = res.disruption.unwrap();
    let said: Vec<(Option<&str>, bool)> =
        dis.events.iter().map(|e| (Some(e.answer.as_str()).filter(|a| !a.is_empty()), e.error.is_some())).collect();
    assert_eq!(said, [(Some("made"), false), (None, true), (None, true)], "{:?}", dis.events);
    assert!(dis.events[1].error.as_deref().unwrap().contains("exit status: 4"));
    assert!(dis.events[2].error.as_deref().unwrap().contains("the run ended first"));
    assert!(dis.before.is_some() && dis.after.is_some(), "{dis:?}");
    assert_valid(&result_json(&d.path().join("out")));
}

/// A server process frozen mid-run (SIGSTOP, as a hung daemon) and
/// thawed; one the schedule leaves stopped is thawed when the run ends.
#[test]
fn a_process_stopped_mid_run_is_thawed_by_its_schedule_or_at_the_runs_end() {
    let d = scratch();
    let mut daemon = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = daemon.id().to_string();
    let state =
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).map(|s| s.rsplit(')').next().unwrap_or("").trim_start().chars().next());
    let stop = |at: &str| format!("{at}:proc-stop:{pid}");
    let (stop1, cont, stop2) = (stop("1s"), format!("2s:proc-cont:{pid}"), stop("3s"));
    let child = Command::new(bin())
        .args(["run", "--name", "x", "--ioengine", "null", "--runtime", "5", "--time_based", "1", "--quiet", "--results-dir", "out"])
        .args(["--fault", &stop1, "--fault", &cont, "--fault", &stop2, "--allow-exec"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for _ in 0..50 {
        // Sleeping or stopped; not the moments it runs or loads (R, D) as it starts.
        if let Ok(Some(c)) = state().map(|c| c.filter(|c| matches!(c, 'S' | 'T'))) {
            if !seen.ends_with(c) {
                seen.push(c);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let after = state();
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(seen.starts_with("STST"), "asleep, stopped, asleep, stopped again: {seen}");
    assert_eq!(after.unwrap(), Some('S'), "thawed when the run ended");
    let dis = run_result(&d.path().join("out")).disruption.unwrap();
    let said: Vec<(String, &str)> = dis.events.iter().map(|e| (e.action.words(), e.outcome())).collect();
    let expect = [
        (stop1[3..].to_string(), "done"),
        (cont[3..].to_string(), "done"),
        (stop2[3..].to_string(), "done"),
        (format!("proc-cont:{pid}"), "undone"),
    ];
    assert_eq!(said, expect, "{:?}", dis.events);
    assert_eq!(dis.events[0].answer, format!("stopped process {pid}"));
    assert_valid(&result_json(&d.path().join("out")));
}

#[test]
fn a_fault_schedule_that_cannot_work_is_refused_before_anything_runs() {
    let d = scratch();
    let common = ["run", "--name", "x", "--filename", "f.dat", "--size", "4m", "--rw", "randread", "--runtime", "1"];
    for (more, says, code) in [
        (&["--fault", "5s:reboot"][..], "unknown action 'reboot'", 2),
        (&["--fault", "soon:osd-out:1"][..], "'soon' is not a time", 2),
        (&["--fault", "1s:osd-out:2"][..], "no Ceph cluster", 2),
        (&["--fault", "1s:proc-stop:sleep"][..], "needs --allow-exec (it signals a process", 2),
        (&["--fault", "1s:proc-stop:1", "--allow-exec"][..], "init process", 2),
        (&["--fault", "1s:proc-cont:no-such-daemon", "--allow-exec"][..], "no process named 'no-such-daemon'", 2),
        (&["--watch-ceph", "/nonexistent/ceph.conf"][..], "no such file", 2),
        (&["--scrape", "http://admin:hunter2@127.0.0.1:9283/metrics"][..], "credentials in a URL", 2),
        (&["--scrape", "127.0.0.1:9283"][..], "not an http or https URL", 2),
        (&["--scrape-keep", "ceph_*"][..], "give --scrape URL too", 2),
        (&["--scrape", "http://127.0.0.1:1/metrics", "--no-telemetry"][..], "drop one of them", 2),
        // Nothing listens there: said with the URL before anything runs.
        (&["--scrape", "http://127.0.0.1:1/metrics"][..], "http://127.0.0.1:1/metrics", 2),
    ] {
        let r = storbench(d.path(), &[&common[..], more, &["--results-dir", "out"]].concat());
        assert_eq!(r.code, code, "{more:?}: {}", r.stderr);
        assert!(r.stderr.contains(says) && !r.stderr.contains("hunter2"), "{more:?}: {}", r.stderr);
        assert!(!d.path().join("out").exists(), "{more:?}: no results written");
    }
}
