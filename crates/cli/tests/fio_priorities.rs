//! fio's ordering and priority options in fio job files, shaped as fio's
//! examples write them (waitfor.fio, cmdprio-percentage.fio,
//! cmdprio-bssplit.fio): jobs that wait for a named job start when it has
//! ended (start times in the results), and I/O priorities reach the kernel
//! and are counted apart per priority.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The jobs of a result document: (name, start_ns, runtime_ns).
fn starts(doc: &serde_json::Value) -> Vec<(String, u64, u64)> {
    let jobs = doc["jobs"].as_array().unwrap();
    jobs.iter()
        .map(|j| (j["name"].as_str().unwrap().to_string(), j["start_ns"].as_u64().unwrap_or(0), j["runtime_ns"].as_u64().unwrap()))
        .collect()
}

/// waitfor.fio, scaled down: four jobs of one group, each but the first
/// waiting for the one before (new_group changes only fio's reporting), run
/// one after another as in fio; a job that names none starts with the first.
#[test]
fn wait_for_starts_a_job_when_the_named_one_has_ended() {
    let d = scratch();
    let job = "[global]\nthreads=1\ngroup_reporting\nfilename=f.dat\nfilesize=8m\nioengine=psync\n\
               [writers]\nrw=write\nbs=128k\nnumjobs=2\nruntime=1\n\
               [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=2\nruntime=1\n\
               [writers2]\nnew_group\nwait_for=readers\nrw=randwrite\nbs=4k\nnumjobs=2\nruntime=1\n\
               [readers2]\nnew_group\nwait_for=writers2\nrw=randread\nbs=4k\nnumjobs=2\nruntime=1\n\
               [free]\nrw=randread\nbs=4k\nruntime=1\nsize=1m\n";
    std::fs::write(d.path().join("w.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "w.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let jobs = starts(&doc);
    assert_eq!(jobs.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["writers", "readers", "writers2", "readers2", "free"]);
    assert_eq!(jobs[0].1, 0, "the first job does not wait");
    for w in jobs[..4].windows(2) {
        let ((prev, start, runtime), (name, next, _)) = (&w[0], &w[1]);
        assert!(*next >= start + runtime, "{name} started at {next} ns, before {prev} ended ({start} + {runtime} ns)");
    }
    assert_eq!(jobs[4].1, 0, "a job that waits for none starts with the group: {jobs:?}");
    assert!(ios(&doc, 3, "read") > 0, "the last job ran");
}

/// What `ionice -p` says of each thread of `pid` named `prefix*`, once
/// `count` of them say `want` (or after 10 s, with what they said).
fn ionice_of_threads(pid: u32, prefix: &str, count: usize, want: &str) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let mut said = Vec::new();
        for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.starts_with(prefix) {
                let tid = t.file_name().to_string_lossy().into_owned();
                let out = Command::new("ionice").args(["-p", &tid]).output().unwrap();
                said.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
            }
        }
        if (said.len() >= count && said.iter().all(|s| s == want)) || Instant::now() > end {
            return said;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// prio and prioclass are the job's own priority: each worker thread of a
/// psync job runs at it (ioprio_set, as fio does), seen from outside with
/// ionice while the job runs.
#[test]
fn prio_and_prioclass_set_each_worker_threads_io_priority() {
    if !have("ionice") {
        eprintln!("skipped: ionice (util-linux) is not installed");
        return;
    }
    let d = scratch();
    let job =
        "[pjob]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\nfilename=f.dat\nnumjobs=2\ntime_based\nruntime=2\nprioclass=2\nprio=7\n";
    std::fs::write(d.path().join("p.fio"), job).unwrap();
    let child = Command::new(bin())
        .args(["run", "--fio", "p.fio", "--results-dir", "out", "--quiet"])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = ionice_of_threads(measuring(child.id()), "sb-pjob-", 2, "best-effort: prio 7");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.len() >= 2 && said.iter().all(|s| s == "best-effort: prio 7"), "{said:?}");
}

/// The reads of one job's priorities in a result document: (class, level) -> I/Os.
fn prio_reads(doc: &serde_json::Value, job: usize, op: &str) -> Vec<((u64, u64), u64)> {
    let prios = doc["jobs"][job]["priorities"].as_array().cloned().unwrap_or_default();
    prios
        .iter()
        .filter_map(|p| {
            let o = p["ops"].as_array().unwrap().iter().find(|o| o["op"] == op)?;
            Some(((p["class"].as_u64().unwrap(), p["level"].as_u64().unwrap()), o["ios"].as_u64().unwrap()))
        })
        .collect()
}

/// cmdprio-percentage.fio's shape on io_uring at 50%: about half of the
/// reads carry the real-time priority (each counted in its own histogram,
/// the kernel taking every one: no failed I/O), the rest the job's idle
/// class; fio's JSON gets the same `prios` array as fio's own.
#[test]
fn cmdprio_percentage_gives_that_share_of_reads_the_priority() {
    let d = scratch();
    let job = "[global]\nfilename=f.dat\ndirect=1\nsize=16m\n\
               [randread]\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=8\nprioclass=3\ncmdprio_percentage=50\ncmdprio_class=1\n";
    std::fs::write(d.path().join("c.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "c.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let reads = ios(&doc, 0, "read");
    assert_eq!(reads, 4096, "every read done, none failed");
    let prios = prio_reads(&doc, 0, "read");
    assert_eq!(prios.iter().map(|p| p.0).collect::<Vec<_>>(), [(3, 0), (1, 0)], "the job's own first: {prios:?}");
    assert_eq!(prios.iter().map(|p| p.1).sum::<u64>(), reads);
    // 4096 draws at 1/2: the standard deviation is 32; 6 of them is 192.
    assert!(prios[1].1.abs_diff(2048) < 192, "{prios:?}");

    let fio_json = show(d.path(), "out", "fio-json");
    let mine: serde_json::Value = serde_json::from_str(&fio_json).unwrap();
    let entries = mine["jobs"][0]["read"]["prios"].as_array().expect("a prios array");
    assert_eq!(entries.len(), 2);
    assert_eq!((entries[1]["prioclass"].as_u64(), entries[1]["prio"].as_u64()), (Some(1), Some(0)));
    assert_eq!(entries[1]["clat_ns"]["N"].as_u64(), Some(prios[1].1));
    if have("fio") {
        let f = Command::new("fio").args(["--output-format=json", "c.fio"]).current_dir(d.path()).output().unwrap();
        assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
        let theirs: serde_json::Value = serde_json::from_slice(&f.stdout).unwrap();
        assert_eq!(keys(&theirs["jobs"][0]["read"]["prios"][0]), keys(&entries[0]), "fio's own layout of a prios entry");
    } else {
        eprintln!("fio is not installed: its own layout not compared");
    }
    let normal = show(d.path(), "out", "fio-normal");
    assert!(normal.contains("clat prio 1/0 (usec)") || normal.contains("clat prio 1/0 (nsec)"), "{normal}");
    assert!(normal.contains("clat prio 3/0 ("), "{normal}");
    assert!(normal.contains("% of IOs) percentiles"), "{normal}");
}

/// An object's keys, nested keys as paths (percentile values vary).
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = v.as_object() {
        for (k, x) in o {
            if k == "percentile" || k == "bins" {
                out.push(k.clone());
                continue;
            }
            out.push(k.clone());
            out.extend(keys(x).into_iter().map(|s| format!("{k}/{s}")));
        }
    }
    out.sort();
    out
}

/// cmdprio-bssplit.fio's extended form on libaio: 64k reads split 25/75
/// between class 1 level 1 and class 3 level 2, 1m reads and every write
/// at the job's own (prio=7 of best effort).
#[test]
fn cmdprio_bssplit_gives_each_size_its_own_priorities() {
    let d = scratch();
    let job = "[global]\nfilename=f.dat\ndirect=1\nsize=32m\nrw=randrw\nioengine=libaio\niodepth=16\nnorandommap\n\
               [adv]\ntime_based\nruntime=2\nprioclass=2\nprio=7\nbssplit=64k/40:1024k/60,1024k/100\n\
               cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\n";
    std::fs::write(d.path().join("b.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "b.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let reads: std::collections::BTreeMap<_, _> = prio_reads(&doc, 0, "read").into_iter().collect();
    let writes = prio_reads(&doc, 0, "write");
    assert_eq!(writes.iter().map(|w| w.0).collect::<Vec<_>>(), [(2, 7)], "writes at the job's own: {writes:?}");
    let (rt, idle, own) = (reads[&(1, 1)], reads[&(3, 2)], reads[&(2, 7)]);
    let small = rt + idle;
    assert!(small > 40 && own > 40, "both sizes read: {reads:?}");
    let share = rt as f64 / small as f64;
    let sd = (0.25 * 0.75 / small as f64).sqrt();
    assert!((share - 0.25).abs() < 6.0 * sd, "{reads:?}");
    // The 1m reads carry the job's own: 64k reads are about 40% of reads.
    let small_share = small as f64 / (small + own) as f64;
    assert!((small_share - 0.4).abs() < 6.0 * (0.24 / (small + own) as f64).sqrt(), "{reads:?}");
}

/// A job that waited starts as fio starts it, with its page cache dropped
/// (invalidate): what the job it waited for wrote is read from the disk,
/// not the cache. Seen with strace: after the writer's last pwrite, a
/// fadvise(DONTNEED) comes before the reader's first pread.
#[test]
fn a_job_that_waited_drops_the_page_cache_before_it_reads() {
    if !have("strace") {
        eprintln!("skipped: strace is not installed");
        return;
    }
    let d = scratch();
    let job = "[global]\nfilename=f.dat\nfilesize=4m\nioengine=psync\nbs=64k\n\
               [w]\nrw=write\n[r]\nwait_for=w\nrw=read\n";
    std::fs::write(d.path().join("c.fio"), job).unwrap();
    let out = Command::new("strace")
        .args([
            "-f",
            "-e",
            "trace=pwrite64,pread64,fadvise64",
            "-o",
            "trace.txt",
            bin(),
            "run",
            "--fio",
            "c.fio",
            "--results-dir",
            "out",
            "--quiet",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let trace = std::fs::read_to_string(d.path().join("trace.txt")).unwrap();
    let lines: Vec<&str> = trace.lines().filter(|l| !l.contains("resumed>") || l.contains("fadvise64")).collect();
    let last_write = lines.iter().rposition(|l| l.contains("pwrite64(")).expect("the writer wrote");
    let first_read = last_write + lines[last_write..].iter().position(|l| l.contains("pread64(")).expect("the reader read");
    assert!(
        lines[last_write..first_read].iter().any(|l| l.contains("POSIX_FADV_DONTNEED")),
        "no cache drop between the last write and the first read:\n{}",
        lines[last_write..=first_read].join("\n")
    );
}
