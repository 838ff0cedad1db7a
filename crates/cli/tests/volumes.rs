//! `volumes=N`: each volume driven at the job's own iodepth and numjobs.
//! On real files through libaio, the operations the workers keep submitted
//! and not yet reaped are counted from the system calls themselves (strace):
//! volumes=4 at iodepth=4 keeps 16 in flight; each volume's file exists
//! while the run goes, and the results give each volume's figures beside
//! the job's (and the HTML report's). A sweep over volumes runs one point
//! per count.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most operations in flight at once, from an strace log of io_submit
/// and io_getevents: each completed io_submit adds what it queued, each
/// io_getevents takes away what it reaped (lines come in the order the
/// calls returned).
fn most_in_flight(log: &str) -> i64 {
    let (mut now, mut most) = (0i64, 0i64);
    for line in log.lines() {
        let Some(ret) = line.rsplit_once("= ").and_then(|(_, r)| r.trim().parse::<i64>().ok()) else { continue };
        if line.contains("io_submit(") || line.contains("io_submit resumed") {
            now += ret;
        } else if line.contains("io_getevents(") || line.contains("io_getevents resumed") {
            now -= ret;
        }
        most = most.max(now);
    }
    most
}

fn strace_run(dir: &std::path::Path, args: &[&str]) -> (Run, String) {
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=io_submit,io_getevents", "-o", "trace.txt", bin()]).args(args).current_dir(dir);
    let o = cmd.output().expect("strace runs");
    let run = Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
    };
    (run, std::fs::read_to_string(dir.join("trace.txt")).unwrap_or_default())
}

const FOUR_BY_FOUR: &[&str] = &[
    "run",
    "--name",
    "v",
    "--ioengine",
    "libaio",
    "--direct",
    "1",
    "--rw",
    "randread",
    "--bs",
    "4k",
    "--size",
    "2m",
    "--iodepth",
    "4",
    "--runtime",
    "1",
    "--time_based",
    "1",
    "--results-dir",
    "out",
    "--quiet",
];

#[test]
fn volumes_at_an_iodepth_keep_volumes_times_iodepth_in_flight() {
    if !have("strace") {
        eprintln!("SKIP: strace is not installed");
        return;
    }
    let d = scratch();
    let mut args = FOUR_BY_FOUR.to_vec();
    args.extend(["--volumes", "4"]);
    let (r, log) = strace_run(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(most_in_flight(&log), 16, "4 volumes x iodepth 4");
    let doc = result_json(&d.path().join("out"));
    let job = &doc["jobs"][0];
    assert_eq!(job["workers"], 4);
    let volumes = job["per_volume"].as_array().expect("per-volume figures");
    assert_eq!(volumes.len(), 4);
    let files: Vec<String> = volumes.iter().map(|v| v["targets"][0].as_str().unwrap().rsplit('/').next().unwrap().to_string()).collect();
    assert_eq!(files, ["v.0.0", "v.1.0", "v.2.0", "v.3.0"]);
    let per_volume: u64 = volumes.iter().map(|v| v["ops"][0]["ios"].as_u64().unwrap()).sum();
    assert!(volumes.iter().all(|v| v["ops"][0]["ios"].as_u64().unwrap() > 0));
    assert_eq!(per_volume, ios(&doc, 0, "read"), "the job's total is the volumes' sum");
    // One volume at the same iodepth: 4.
    let d1 = scratch();
    let (r1, log1) = strace_run(d1.path(), FOUR_BY_FOUR);
    assert_eq!(r1.code, 0, "{}", r1.stderr);
    assert_eq!(most_in_flight(&log1), 4);
    assert!(result_json(&d1.path().join("out"))["jobs"][0].get("per_volume").is_none());
}

#[test]
fn each_volume_has_its_own_file_while_the_run_goes() {
    let d = scratch();
    let mut child = Command::new(bin())
        .args(["run", "--name", "f", "--filename", "data", "--rw", "randwrite", "--bs", "4k", "--size", "1m", "--volumes", "3"])
        .args(["--numjobs", "2", "--runtime", "3", "--time_based", "1", "--results-dir", "out", "--quiet"])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("storbench starts");
    let want = ["data.0", "data.1", "data.2"];
    let began = Instant::now();
    let mut seen = false;
    while began.elapsed() < Duration::from_secs(10) && child.try_wait().unwrap().is_none() {
        if want.iter().all(|f| d.path().join(f).is_file()) {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(seen, "every volume's file existed during the run: {:?}", listing(d.path()));
    let doc = result_json(&d.path().join("out"));
    let vols = doc["jobs"][0]["per_volume"].as_array().unwrap();
    assert_eq!(vols.len(), 3);
    assert!(vols.iter().all(|v| v["workers"] == 2), "{vols:?}");
    assert_eq!(doc["jobs"][0]["workers"], 6);
    // The report has each volume's row, with its file.
    let report = storbench(d.path(), &["report", "out", "-o", "r.html"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let page = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    let table = &page[page.find("<table id=\"volumes-f\">").expect("a per-volume table")..];
    assert!(table.contains("data.2</td>"), "{}", &table[..table.find("</table>").unwrap()]);
}

#[test]
fn a_sweep_over_volumes_runs_one_point_per_count() {
    let d = scratch();
    let r = storbench(
        d.path(),
        &[
            "sweep",
            "--quiet",
            "--no-knee",
            "--results-dir",
            "sw",
            "--name",
            "s",
            "--ioengine",
            "null",
            "--size",
            "1g",
            "--iodepth",
            "2",
            "--runtime",
            "1",
            "--time_based",
            "1",
            "--sweep",
            "volumes=1,2",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let set = storbench_model::RunSet::load(&d.path().join("sw")).expect("the sweep reads back");
    let workers: Vec<u64> = set.runs.iter().map(|run| u64::from(run.result.jobs[0].workers)).collect();
    let volumes: Vec<usize> = set.runs.iter().map(|run| run.result.jobs[0].per_volume.len()).collect();
    assert_eq!(workers, [1, 2]);
    assert_eq!(volumes, [0, 2]);
}
