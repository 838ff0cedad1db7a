//! Every phase can be interrupted, with SIGINT or SIGTERM alike, and the run
//! exits within a second (the tests allow two: common::EXIT_WITHIN): layout
//! and the measured phase on files, the measured phase on RBD, and prefill,
//! measured phase and cleanup on RADOS, S3 (RGW) and Swift (the all-in-one).
//! What the run created is gone
//! afterwards (checked with the store's own tools, not storbench's word), or,
//! when the interrupt cut the cleanup short, listed with the command that
//! removes it, and that command works. Each case prints one line of the
//! interrupt table (`cargo test --test interrupts -- --nocapture`).
//!
//! A worker stuck in a call to its storage does not hold up the second
//! signal: the run ends within a second with what it measured.
//!
//! The cases run one at a time: they time the exit, and the machine is small.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Interrupt a run at a stage and check it ended in time, as interrupted,
/// with its results written.
#[allow(clippy::too_many_arguments)]
fn interrupt(
    dir: &Path,
    env: &[(&str, String)],
    target: &str,
    phase: &str,
    args: &[&str],
    when: &str,
    after: Duration,
    signal: i32,
) -> (Run, storbench_model::RunResult) {
    interrupt_steps(dir, env, target, phase, args, &[(when, after, signal)])
}

/// [`interrupt`] with several signals, each at its stage; the exit is timed
/// from the last.
fn interrupt_steps(
    dir: &Path,
    env: &[(&str, String)],
    target: &str,
    phase: &str,
    args: &[&str],
    steps: &[(&str, Duration, i32)],
) -> (Run, storbench_model::RunResult) {
    let signal = steps.last().expect("a signal").2;
    let (r, took) = signalled(dir, env, args, steps);
    eprintln!("INTERRUPT | {target} | {phase} | {} | {} ms | exit {}", signal_name(signal), took.as_millis(), r.code);
    assert!(took < EXIT_WITHIN, "{target} {phase}: exited {} ms after {}:\n{}", took.as_millis(), signal_name(signal), r.stderr);
    assert_eq!(r.code, 130, "an interrupted run exits 130:\n{}", r.stderr);
    let out = args.iter().position(|a| *a == "--results-dir").map(|i| args[i + 1]).expect("a results dir");
    let result = run_result(&dir.join(out));
    assert!(result.interrupted, "the results say the run was interrupted");
    (r, result)
}

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| s.to_string()).collect()
}

fn words(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_file_layout_stops_at_once_and_removes_the_file_it_began() {
    let _t = turn();
    let d = scratch();
    let file = d.path().join("big");
    let size = layout_size(d.path());
    let mut child = Command::new(bin())
        .args(["run", "--name", "l", "--filename", file.to_str().unwrap(), "--size", &size, "--rw", "read", "--runtime", "5"])
        .args(["--results-dir", "out", "--quiet"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    while std::fs::metadata(&file).map(|m| m.len() < 64 << 20).unwrap_or(true) {
        if let Some(status) = child.try_wait().unwrap() {
            let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
            panic!("the run ended ({status}) before its {size} layout reached 64 MiB: {stderr}");
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "the {size} layout never reached 64 MiB in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    eprintln!("INTERRUPT | files | layout | SIGTERM | {} ms | exit {}", took.as_millis(), status.code().unwrap_or(-1));
    assert!(took < EXIT_WITHIN, "exited {} ms after SIGTERM: {stderr}", took.as_millis());
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted while laying it out"), "{stderr}");
    assert!(!file.exists(), "the file it began is removed");
    assert!(!d.path().join("out").exists(), "nothing was measured: no results directory");
}

/// A layout big enough to be caught in the middle (8 GiB at most), yet half
/// the free space at most: the run refuses a layout its file system cannot
/// hold, and a machine running the test clusters may have little to spare.
fn layout_size(dir: &Path) -> String {
    let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    // SAFETY: statvfs fills the zeroed struct we pass for a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0, "statvfs {}", dir.display());
    let free_mib = (st.f_bavail as u64 * st.f_frsize as u64) >> 20;
    assert!(free_mib >= 1024, "{} has {free_mib} MiB free; the layout test needs at least 1 GiB", dir.display());
    format!("{}m", (free_mib / 2).min(8 << 10))
}

#[test]
fn a_measured_run_on_a_file_stops_at_once_and_keeps_what_it_measured() {
    let _t = turn();
    let d = scratch();
    let args = ["run", "--name", "m", "--filename", "f", "--size", "16m", "--rw", "randread", "--time_based", "1", "--runtime", "30"];
    let args = [&args[..], &["--results-dir", "out"]].concat();
    let (_, r) = interrupt(d.path(), &[], "files", "measured", &args, "measuring", Duration::from_millis(1500), libc::SIGINT);
    assert!(r.jobs[0].total_ios() > 0 && !r.jobs[0].series.is_empty(), "the elapsed seconds were measured");
    assert!(std::fs::read_to_string(d.path().join("out/series.csv")).unwrap().lines().count() > 1);
}

#[test]
fn a_measured_run_on_rbd_stops_at_once_and_leaves_no_lock() {
    if !ceph_cluster() {
        return;
    }
    let _t = turn();
    let d = scratch();
    let pool = std::env::var("STORBENCH_RBD_POOL").unwrap_or_else(|_| "rbd".into());
    let image = format!("sbintr{}", std::process::id());
    let args = ["run", "--name", "b", "--ioengine", "rbd", "--pool", &pool, "--rbdname", &image, "--size", "64m", "--rw", "randwrite"];
    let args = with(&args, &["--iodepth", "8", "--runtime", "30", "--results-dir", "out"]);
    for (signal, out) in [(libc::SIGTERM, "out"), (libc::SIGINT, "again")] {
        let mut a = args.clone();
        *a.last_mut().unwrap() = out.into();
        let (r, result) = interrupt(d.path(), &[], "rbd", "measured", &words(&a), "measuring", Duration::from_secs(1), signal);
        assert!(result.jobs[0].total_ios() > 0, "{}", r.stdout);
        assert!(!r.stderr.contains("is locked by"), "the first run closed its image; no lock is left for the second: {}", r.stderr);
    }
    let locks = Command::new("rbd").args(["lock", "ls", &format!("{pool}/{image}")]).output().unwrap();
    assert!(String::from_utf8_lossy(&locks.stdout).trim().is_empty(), "no lock left: {}", String::from_utf8_lossy(&locks.stdout));
    let _ = Command::new("rbd").args(["rm", "--no-progress", &format!("{pool}/{image}")]).output();
}

/// Names in the store starting with a prefix.
type Lister = dyn Fn(&str) -> Vec<String>;

/// One object store: its engine options, its credentials, and how to list
/// its objects behind storbench's back.
struct Store {
    name: &'static str,
    env: Vec<(&'static str, String)>,
    place: Vec<String>,
    list: Box<Lister>,
}

/// Prefill, measured phase and cleanup of one object store, interrupted.
fn object_phases(store: &Store) {
    let _t = turn();
    let d = scratch();
    let tag = format!("sbi{}", std::process::id());
    let job = |prefix: &str, more: &[&str]| -> Vec<String> {
        // A prefill must fit in the pool's free space (else it is refused
        // before it starts): 2,000 MiB objects, of which only a few are written.
        let objects = if store.name == "rados" && more.contains(&"--prefill") { "2000" } else { "100000" };
        let base = ["run", "--name", "o", "--ioengine", store.name, "--object_prefix", prefix, "--objects", objects];
        let mut a = with(&base, &words(&store.place));
        a.extend(more.iter().map(|s| s.to_string()));
        a
    };
    let env = &store.env;

    // Prefill (large objects, two at a time, so little is written before the signal).
    let p = format!("{tag}.p.");
    let a = job(&p, &["--object_size", "1m", "--rw", "randread", "--prefill", "1", "--iodepth", "2", "--runtime", "30"]);
    let a = with(&words(&a), &["--results-dir", "prefill"]);
    let (r, result) = interrupt(d.path(), env, store.name, "prefill", &words(&a), "prefill", Duration::from_millis(500), libc::SIGINT);
    assert_eq!(result.jobs[0].total_ios(), 0, "nothing was measured: {}", r.stdout);
    assert_eq!(result.jobs[0].objects_left, 0, "{:?}", result.warnings);
    assert_eq!((store.list)(&p), Vec::<String>::new(), "the prefilled objects are gone");

    // Measured phase (at a fixed rate, so cleanup has little to do).
    let m = format!("{tag}.m.");
    let a = job(&m, &["--object_size", "4k", "--rw", "write", "--iodepth", "4", "--rate_iops", "50", "--runtime", "30"]);
    let a = with(&words(&a), &["--results-dir", "measured"]);
    let (r, result) = interrupt(d.path(), env, store.name, "measured", &words(&a), "measuring", Duration::from_secs(1), libc::SIGTERM);
    assert!(result.jobs[0].total_ios() > 10, "the elapsed second was measured: {}", r.stdout);
    assert_eq!(result.jobs[0].objects_left, 0, "{:?}", result.warnings);
    assert_eq!((store.list)(&m), Vec::<String>::new(), "the objects it wrote are gone");

    // Cleanup: cut short, the rest listed with the command that removes it.
    let c = format!("{tag}.c.");
    let a = job(&c, &["--object_size", "4k", "--rw", "write", "--iodepth", "16", "--runtime", "2"]);
    let a = with(&words(&a), &["--results-dir", "cleanup"]);
    let (r, result) =
        interrupt(d.path(), env, store.name, "cleanup", &words(&a), "removing the objects", Duration::from_millis(100), libc::SIGTERM);
    assert!(r.stdout.contains("measurements complete"), "a stop during cleanup leaves the measurements whole: {}", r.stdout);
    let left = result.jobs[0].objects_left;
    let listed = (store.list)(&c);
    // Deletes in flight when the stop came (16 at most) may still have
    // happened on the server after storbench gave up on them: each is
    // said to be left (the safe side; the journal's cleanup skips what is
    // gone), so the store may list up to that many fewer.
    assert!(left > 0 && listed.len() as u64 + 16 >= left, "{left} objects said to be left, {} listed", listed.len());
    let note = result.warnings.iter().map(|w| w.message()).find(|m| m.contains("were not removed")).expect("the leftovers are named");
    assert!(note.contains(&format!("{left} objects")), "{note}");
    let commands = note.split("remove them with: ").nth(1).expect("with the command that removes them");
    // The run's own directory first (its journal knows the objects), then by prefix.
    let (command, by_prefix) = commands.split_once(" (or: ").expect("the results directory, or the prefix");
    assert!(by_prefix.starts_with(&format!("storbench cleanup --ioengine {}", store.name)), "{by_prefix}");
    let argv: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(argv[..2], ["storbench", "cleanup"], "{command}");
    let done = storbench_env(d.path(), env, &argv[1..]);
    assert_eq!(done.code, 0, "{command}: {}", done.stderr);
    assert!(done.stdout.contains(&format!("removed {} objects", listed.len())), "{}", done.stdout);
    assert_eq!((store.list)(&c), Vec::<String>::new(), "`{command}` removed every object of the run");
    eprintln!("INTERRUPT | {} | cleanup | left {left}, listed {}, removed by `{command}` |", store.name, listed.len());

    // A Ctrl-C in the measured phase lets cleanup run; a second one skips it.
    let t = format!("{tag}.t.");
    let a = job(&t, &["--object_size", "4k", "--rw", "write", "--iodepth", "16", "--runtime", "30", "--results-dir", "twice"]);
    let steps = [("measuring", Duration::from_secs(2), libc::SIGINT), ("removing the objects", Duration::from_millis(50), libc::SIGINT)];
    let (r, result) = interrupt_steps(d.path(), env, store.name, "measured, then cleanup", &words(&a), &steps);
    assert!(r.stderr.contains("skipping the rest of the cleanup"), "{}", r.stderr);
    assert!(r.stdout.contains("INTERRUPTED: partial results"), "the first Ctrl-C cut the measured phase: {}", r.stdout);
    let left = result.jobs[0].objects_left;
    assert!(left > 0 && result.warnings.iter().any(|w| w.message().contains("storbench cleanup")), "{:?}", result.warnings);
    let done =
        storbench_env(d.path(), env, &["cleanup", "--ioengine", store.name, &store.place[0], &store.place[1], "--object_prefix", &t]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!((store.list)(&t), Vec::<String>::new());
}

#[test]
fn rados_prefill_measured_phase_and_cleanup_are_interruptible() {
    if !ceph_cluster() {
        return;
    }
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let p = pool.clone();
    object_phases(&Store {
        name: "rados",
        env: Vec::new(),
        place: vec!["--pool".into(), pool],
        list: Box::new(move |prefix| rados_objects(&p, prefix)),
    });
}

#[test]
fn s3_prefill_measured_phase_and_cleanup_are_interruptible() {
    let Some(env) = s3_env() else { return };
    let bucket = format!("sbintr{}", std::process::id());
    let b = bucket.clone();
    let list = move |prefix: &str| {
        let out = Command::new("radosgw-admin").args(["bucket", "list", "--bucket", &b, "--max-entries", "1000000"]).output().unwrap();
        let names: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        names.iter().filter_map(|o| o["name"].as_str()).filter(|n| n.starts_with(prefix)).map(String::from).collect()
    };
    object_phases(&Store { name: "s3", env, place: vec!["--bucket".into(), bucket], list: Box::new(list) });
}

#[test]
fn swift_prefill_measured_phase_and_cleanup_are_interruptible() {
    let Some(env) = swift_env("aio") else { return };
    let container = format!("sbintr{}", std::process::id());
    let (url, token) = swift_session(&env);
    let c = container.clone();
    let list = move |prefix: &str| {
        let out = Command::new("curl")
            .args(["-s", "-H", &format!("X-Auth-Token: {token}"), &format!("{url}/{c}?prefix={prefix}")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with(prefix)).map(String::from).collect()
    };
    object_phases(&Store { name: "swift", env, place: vec!["--container".into(), container], list: Box::new(list) });
}

/// A worker stuck inside an engine call (the tcp engine's blocking read,
/// from an agent's network service stopped with SIGSTOP 2.5 s into the run:
/// it waits out its 15 s socket timeout): a Ctrl-C stops the run but cannot
/// reach the worker; a SIGTERM after it ends the process within a second all
/// the same, with the results of the seconds it reported written and the
/// abandoned worker named (before: it waited for the worker, 14 s).
#[test]
fn a_worker_stuck_in_its_engine_does_not_hold_up_a_second_signal() {
    let _t = turn();
    let d = scratch();
    let fleet = common::fleet::fleet_dir(d.path(), "fleet");
    let agent = common::fleet::Agent::start(None, "127.0.0.96:7450", &fleet, d.path().join("agent.log"), &[]);
    // The engine's fleet_dir, through its variable (--fleet-dir is the fleet's flag).
    let env = [("STORBENCH_FLEET_DIR", fleet.to_str().unwrap().to_string())];
    let args = ["run", "--name", "t", "--ioengine", "tcp", "--hostname", "127.0.0.96", "--port", "7451"];
    let args =
        [&args[..], &["--tcp_mode", "receive", "--bs", "64k", "--time_based", "1", "--runtime", "30", "--results-dir", "out"]].concat();
    let pid = agent.pid() as i32;
    let freeze = |_: i32| signal(pid, libc::SIGSTOP);
    let (int, term) = (|p: i32| signal(p, libc::SIGINT), |p: i32| signal(p, libc::SIGTERM));
    let steps: [(&str, Duration, Act); 3] = [
        ("measuring", Duration::from_millis(2500), &freeze),
        ("", Duration::from_millis(500), &int),
        ("", Duration::from_millis(500), &term),
    ];
    let (r, took) = staged(d.path(), &env, &args, &steps, Duration::from_secs(30));
    signal(pid, libc::SIGCONT);
    eprintln!("INTERRUPT | tcp (worker stuck in a read) | measured | SIGINT, then SIGTERM | {} ms | exit {}", took.as_millis(), r.code);
    assert!(took < EXIT_WITHIN, "exited {} ms after the SIGTERM: {}", took.as_millis(), r.stderr);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let result = run_result(&d.path().join("out"));
    assert!(result.interrupted && result.jobs[0].total_ios() > 0, "the seconds before the freeze are measured: {}", r.stdout);
    let w = result.jobs[0].warnings.iter().map(|w| w.message()).find(|m| m.contains("abandoned"));
    assert!(w.is_some_and(|w| w.contains("1 workers")), "the stuck worker is named: {:?}", result.jobs[0].warnings);
    drop(agent);
}
