//! fio's scheduling options in fio job files, shaped as fio's examples
//! write them (numa.fio, fixed-rate-submission.fio, steadystate.fio), with
//! what fio's meaning implies checked on the running process: worker
//! threads bound to CPUs and a memory policy (read from /proc while they
//! run), fixed-rate submission, and fio's spellings that change nothing.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The CPUs online here (`0-1` -> [0, 1]).
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut v = Vec::new();
    for part in text.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        v.extend(lo.parse::<u32>().unwrap()..=hi.parse::<u32>().unwrap());
    }
    v
}

/// `status` and `numa_maps` of each thread of `pid` whose name starts with
/// `prefix`, by name, once `count` of them run (within 10 s).
fn worker_threads(pid: u32, prefix: &str, count: usize) -> Vec<(String, String, String)> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let mut found = Vec::new();
        for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
            let p = t.path();
            let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default().trim().to_string();
            if name.starts_with(prefix) {
                let status = std::fs::read_to_string(p.join("status")).unwrap_or_default();
                let maps = std::fs::read_to_string(p.join("numa_maps")).unwrap_or_default();
                found.push((name, status, maps));
            }
        }
        if found.len() >= count || Instant::now() > end {
            found.sort();
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn field<'a>(status: &'a str, key: &str) -> &'a str {
    status.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or("")
}

/// Start `storbench run --fio job.fio` in `dir` and read its workers while they run.
fn while_running(dir: &Path, job: &str, prefix: &str, count: usize) -> Vec<(String, String, String)> {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let child = Command::new(bin())
        .args(["run", "--fio", "job.fio", "--results-dir", "out", "--quiet"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let threads = worker_threads(measuring(child.id()), prefix, count);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    threads
}

#[test]
fn cpus_allowed_split_puts_each_worker_on_its_own_cpu() {
    let cpus = online_cpus();
    if cpus.len() < 2 {
        eprintln!("SKIP: one CPU online; split needs two");
        return;
    }
    let d = scratch();
    let job = format!(
        "[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\ntime_based\nruntime=2\nfilename=f.dat\n\
         [split]\ncpus_allowed={},{}\ncpus_allowed_policy=split\nnumjobs=2\n",
        cpus[0], cpus[1]
    );
    let threads = while_running(d.path(), &job, "sb-split-", 2);
    let bound: Vec<&str> = threads.iter().map(|(_, s, _)| field(s, "Cpus_allowed_list:")).collect();
    assert_eq!(bound, [cpus[0].to_string(), cpus[1].to_string()], "{threads:?}");
}

#[test]
fn numa_nodes_bind_the_workers_cpus_and_memory_policy() {
    let d = scratch();
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap().trim().to_string();
    // numa.fio's job1, scaled down.
    let job = "[global]\nioengine=libaio\nbuffered=0\nrw=randread\nbs=64k\niodepth=4\nsize=4m\ntime_based\nruntime=2\nfilename=f.dat\n\
               [job1]\nnuma_cpu_nodes=0\nnuma_mem_policy=bind:0\n";
    let threads = while_running(d.path(), job, "sb-job1-", 1);
    let (_, status, maps) = &threads[0];
    assert_eq!(field(status, "Cpus_allowed_list:"), node0);
    // numa_maps shows the thread's own policy on mappings without one of their own.
    assert!(maps.lines().any(|l| l.split_whitespace().nth(1) == Some("bind:0")), "{maps}");
}

#[test]
fn a_cpu_or_node_this_machine_lacks_is_refused_by_number() {
    let d = scratch();
    std::fs::write(d.path().join("j.fio"), "[a]\nioengine=psync\nsize=1m\nfilename=f.dat\ncpus_allowed=0,1000-1002\n").unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("CPUs 1000-1002 that this machine does not have"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert_eq!(listing(d.path()), ["j.fio"]);
}

/// fixed-rate-submission.fio, scaled down: submitted on schedule (fio's
/// offload), so a run of 2 s at 200 IOPS does about 400 reads.
#[test]
fn io_submit_mode_offload_runs_at_the_fixed_rate() {
    let d = scratch();
    let job = "[fixed-rate-submit]\nsize=8m\nrw=read\nioengine=libaio\niodepth=32\ndirect=1\nfilename=f.dat\n\
               io_submit_mode=offload\nrate_iops=200\nruntime=2\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reads = ios(&result_json(&d.path().join("out")), 0, "read");
    assert!((300..=420).contains(&reads), "{reads} reads in 2 s at 200 IOPS");
}

/// steadystate.fio's `threads=1`: fio 3.33 takes it as its tiobench
/// profile's thread count, which does nothing without profile=tiobench.
#[test]
fn threads_as_steadystate_fio_writes_it_changes_nothing() {
    let d = scratch();
    let job = "[global]\nthreads=1\nthread\nsize=1m\n[w]\nfilename=f.dat\nrw=write\nbs=128k\nnumjobs=2\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "write"), 16);
}

/// latency-profile.fio, scaled down: fio's search for the deepest queue
/// (1 to iodepth) whose latency_percentile stays under latency_target,
/// each depth run for latency_window. With a target every depth meets, the
/// answer is the job's iodepth, said on stdout and kept in slo.json.
#[test]
fn latency_target_searches_the_queue_depth_and_says_the_one_found() {
    let d = scratch();
    let job = "[global]\nbs=4k\nrw=randread\nrandom_generator=lfsr\ndirect=1\nioengine=libaio\niodepth=4\n\
               latency_target=1s\nlatency_window=300000\nlatency_percentile=90\n[device]\nfilename=f.dat\nsize=8m\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("at iodepth 4"), "{}", r.stdout);
    let slo: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out/slo.json")).unwrap()).unwrap();
    assert_eq!(slo["answer_iodepth"], 4, "{slo}");
    assert_eq!(slo["percentile"], 90.0);
    assert_eq!(slo["bound_ns"], 1_000_000_000u64);
    // Each depth tried ran as its own run, closed loop at that depth.
    let depths: Vec<u64> = slo["probes"].as_array().unwrap().iter().filter_map(|p| p["iodepth"].as_u64()).collect();
    assert_eq!(depths, [1, 2, 4], "{slo}");
}

/// The fio drop-in answers latency-profile.fio as fio does, ramping the
/// depth inside the job (fio_semantics.rs holds the ramp to fio's): the
/// report is the final run at the depth found, and fio's latency keys say
/// the target (ns), the window (us), the percentile and that depth; fio on
/// the same file settles on the same depth. With a target no depth meets,
/// both end at depth 1. (Before: refused, exit 1; then slo's search.)
#[test]
fn the_fio_drop_in_reports_the_depth_latency_target_settles_on() {
    let d = scratch();
    let job = |target: &str| {
        format!(
            "[global]\nbs=4k\nrw=randread\ndirect=1\nioengine=libaio\niodepth=4\nlatency_target={target}\n\
             latency_window=300000\nlatency_percentile=90\ntime_based\nruntime=3\n[device]\nfilename=f.dat\nsize=8m\n"
        )
    };
    let keys = |text: &str| {
        let doc: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap_or_else(|e| panic!("{e}: {text}"));
        let j = &doc["jobs"][0];
        let k = |name: &str| j[name].as_f64().unwrap_or(-1.0);
        (k("latency_depth"), k("latency_target"), k("latency_window"), k("latency_percentile"), j["read"]["total_ios"].as_u64().unwrap())
    };
    for (target, depth) in [("1s", 4.0), ("1us", 1.0)] {
        std::fs::write(d.path().join("j.fio"), job(target)).unwrap();
        let r = storbench(d.path(), &["fio", "--output-format=json", "j.fio"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let (got_depth, got_target, window, percentile, reads) = keys(&r.stdout);
        let target_ns = if target == "1s" { 1e9 } else { 1e3 };
        assert_eq!((got_depth, got_target, window, percentile), (depth, target_ns, 300_000.0, 90.0), "{}", r.stdout);
        assert!(reads > 0, "the report is a run's: {}", r.stdout);
        // Nothing left behind but the job's own file.
        assert_eq!(listing(d.path()), ["f.dat", "j.fio"]);
        if fio_available() {
            let out = Command::new("fio").args(["--output-format=json", "j.fio"]).current_dir(d.path()).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let (fio_depth, fio_target, fio_window, fio_percentile, _) = keys(&String::from_utf8_lossy(&out.stdout));
            assert_eq!(
                (fio_depth, fio_target, fio_window, fio_percentile),
                (got_depth, got_target, window, percentile),
                "fio and storbench"
            );
        }
    }
}

/// flow.fio, scaled down: two jobs of one flow with weights 1 and 8 issue
/// about 1:8 (fio's token-based flow control), whatever each could do alone.
#[test]
fn flow_weights_share_the_operations_between_jobs() {
    let d = scratch();
    let job = "[global]\nnorandommap\nthread\ntime_based\nruntime=1\nioengine=psync\nsize=4m\nbs=8k\nfilename=f.dat\nflow_sleep=1000\n\
               [job2]\nnumjobs=1\nrw=write\nflow=1\n[job1]\nnumjobs=1\nrw=randread\nflow=8\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let (writes, reads) = (ios(&doc, 0, "write"), ios(&doc, 1, "read"));
    let ratio = reads as f64 / writes.max(1) as f64;
    assert!((6.0..=10.0).contains(&ratio), "{reads} reads to {writes} writes");
}

/// butterfly.fio, scaled down: two jobs of one flow, each held whenever it
/// is ahead of the other. A held worker with nothing in flight waits for the
/// other job's worker, a thread of the same process (and of the same
/// scheduling group under the kernel's autogroups), so it sleeps; it spun
/// before (no sleep at all in its strace), taking the CPU the other needed
/// wherever they shared one: 0.06-0.17x fio's IOPS beside a build.
#[test]
fn a_worker_held_by_flow_sleeps_rather_than_spins() {
    if !have("strace") {
        assert!(std::env::var_os("CI").is_none(), "strace is missing in CI: scripts/install-deps.sh installs it");
        eprintln!("SKIP: strace is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let d = scratch();
    let job =
        "[global]\nfilename=f.dat\nsize=8m\nbs=4k\ntime_based\nruntime=1\n[forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=2\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let args = ["-f", "-qq", "-e", "trace=nanosleep,clock_nanosleep", "-o", "trace.txt", bin(), "fio", "--output-format=json", "j.fio"];
    let out = Command::new("timeout").arg("60").arg("strace").args(args).current_dir(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sleeps = std::fs::read_to_string(d.path().join("trace.txt")).unwrap().lines().filter(|l| l.contains("nanosleep(")).count();
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap();
    let reads: u64 = doc["jobs"].as_array().unwrap().iter().map(|j| j["read"]["total_ios"].as_u64().unwrap()).sum();
    assert!(reads >= 200, "the flow let both jobs read: {reads} reads");
    assert!(sleeps >= 50, "held workers slept {sleeps} times over {reads} reads (a spinning worker sleeps never)");
}
