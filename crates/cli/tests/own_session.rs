//! A measuring command measures in a session of its own, as fio's jobs do
//! (crates/cli/src/own_session.rs): its workers are in another session than
//! the caller's, so the kernel's autogroup does not rank them with a build
//! started from the same shell. Help and `show` run in place. The launcher
//! passes SIGINT, SIGTERM and SIGHUP on (the elapsed results and exit code 130, as
//! before), a SIGKILLed launcher leaves its results and no orphan, and a
//! `fio`-named link still answers as fio.
//!
//! Where autogroup is off (or `STORBENCH_SAME_SESSION=1`) nothing is
//! started again, and the tests say so and skip.

mod common;
use common::*;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tests time exits: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn apart_here() -> bool {
    if measures_apart() {
        return true;
    }
    // Under CI the feature must be tested, not skipped (Debian's kernel has autogroup on).
    assert!(std::env::var_os("CI").is_none(), "autogroup is off (or STORBENCH_SAME_SESSION=1) in CI: nothing here would be tested");
    eprintln!("SKIP: the kernel's autogroup is off here (or STORBENCH_SAME_SESSION=1): storbench measures in place");
    false
}

/// A psync job on a small file, `secs` long.
fn job(secs: &str) -> Vec<&str> {
    let mut a = vec!["run", "--name", "s", "--ioengine", "psync", "--rw", "randread", "--bs", "4k", "--size", "1m"];
    a.extend(["--filename", "f.dat", "--runtime", secs, "--time_based", "1", "--results-dir", "out"]);
    a
}

/// Field 6 of /proc/PID/task/TID/stat (after the name, which may hold spaces): the session.
fn session_of(stat: &str) -> Option<i32> {
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(3)?.parse().ok()
}

/// (thread name, session) of each thread of `pid`.
fn threads(pid: u32) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let name = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim().to_string();
        if let Some(s) = std::fs::read_to_string(t.path().join("stat")).ok().as_deref().and_then(session_of) {
            out.push((name, s));
        }
    }
    out
}

fn my_session() -> i32 {
    // SAFETY: getsid(0) only reads this process's session.
    unsafe { libc::getsid(0) }
}

fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Reaped, or a zombie nobody has reaped yet (a container's first process may not).
    stat.is_empty() || stat[stat.rfind(')').map_or(0, |i| i + 1)..].trim_start().starts_with('Z')
}

#[test]
fn a_measuring_runs_workers_are_in_a_session_of_their_own() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    let d = scratch();
    let mut child = Command::new(bin()).args(job("3")).current_dir(d.path()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let pid = measuring(child.id());
    let end = Instant::now() + Duration::from_secs(10);
    let mut seen = threads(pid);
    while !seen.iter().any(|(n, _)| n.starts_with("sb-s-")) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
        seen = threads(pid);
    }
    let status = child.wait().unwrap();
    assert_ne!(pid, child.id(), "the launcher started a child to measure in");
    assert!(seen.iter().any(|(n, _)| n.starts_with("sb-s-")), "a worker thread ran: {seen:?}");
    assert!(seen.iter().all(|(_, s)| *s == pid as i32 && *s != my_session()), "every thread in the child's own session: {seen:?}");
    assert_eq!(status.code(), Some(0));
    assert!(run_result(&d.path().join("out")).jobs[0].ops[0].ios > 0);
}

/// The execve and setsid calls of `args` (a command in `dir`), by strace.
fn traced(dir: &Path, program: &Path, args: &[&str]) -> (Run, Vec<String>) {
    let log = dir.join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-s", "256", "-e", "trace=execve,setsid", "-o"])
        .arg(&log)
        .arg(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let calls = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("execve(") || l.contains("setsid("))
        .map(String::from)
        .collect();
    std::fs::remove_file(&log).unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    };
    (run, calls)
}

/// Help and `show` run in place (one execve, no setsid); a run and the fio
/// drop-in under a `fio` link start once more in a new session, the link's
/// name kept as argv[0], and the drop-in still answers as fio.
#[test]
fn help_and_show_run_in_place_and_a_run_or_the_fio_link_in_a_new_session() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    if !have("strace") {
        assert!(std::env::var_os("CI").is_none(), "strace is missing in CI: scripts/test.sh must install it");
        eprintln!("SKIP: strace is not installed");
        return;
    }
    let d = scratch();
    let count = |calls: &[String], what: &str| calls.iter().filter(|c| c.contains(what)).count();
    let (r, calls) = traced(d.path(), Path::new(bin()), &job("1"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!((count(&calls, "execve("), count(&calls, "setsid()")), (2, 1), "a run starts itself again in a new session: {calls:?}");
    for args in [&["run", "--help"][..], &["show", "out"], &["help", "options"], &["run", "--name", "s", "-h"]] {
        let (r, calls) = traced(d.path(), Path::new(bin()), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!((count(&calls, "execve("), count(&calls, "setsid()")), (1, 0), "{args:?} runs in place: {calls:?}");
    }
    let link = d.path().join("fio");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let fio_args = ["--name=a", "--rw=read", "--bs=4k", "--size=1m", "--filename=g.dat", "--output-format=json"];
    let (r, calls) = traced(d.path(), &link, &fio_args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("fio's JSON: {e}: {}", r.stdout));
    assert_eq!(doc["fio version"], "fio-3.33");
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 256);
    let execs: Vec<&String> = calls.iter().filter(|c| c.contains("execve(")).collect();
    assert_eq!((execs.len(), count(&calls, "setsid()")), (2, 1), "{calls:?}");
    let link_name = format!("[\"{}\"", link.display());
    assert!(execs.iter().all(|c| c.contains(&link_name)), "argv[0] is the link's, for both: {execs:?}");
}

/// SIGINT, SIGTERM and SIGHUP (the terminal closed) to the launcher (the
/// process a shell or a script knows) stop the run as before: exit 130
/// within a second, the elapsed results written, the measuring child gone.
#[test]
fn sigint_sigterm_and_sighup_to_the_launcher_end_the_run_with_its_results() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    // Under `nohup` (a CI started by hand) SIGHUP comes ignored, storbench
    // inherits that and rightly keeps running on a hang-up: the launcher
    // here must start as from a terminal, with SIGHUP's default action.
    // SAFETY: restoring a default action installs no handler.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_DFL) };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let d = scratch();
        let inner = std::sync::atomic::AtomicU32::new(0);
        let act = |pid: i32| {
            inner.store(measuring(pid as u32), std::sync::atomic::Ordering::Relaxed);
            signal(pid, sig);
        };
        let (r, took) =
            staged(d.path(), &[], &job("60"), &[("measuring", Duration::from_millis(1000), &act as Act)], Duration::from_secs(20));
        let inner = inner.into_inner();
        eprintln!("OWN SESSION | {} to the launcher | {} ms | exit {}", signal_name(sig), took.as_millis(), r.code);
        assert_eq!(r.code, 130, "{}", r.stderr);
        assert!(took < Duration::from_secs(2), "exited {} ms after {}", took.as_millis(), signal_name(sig));
        assert!(gone(inner), "the measuring process {inner} ended with the launcher");
        let result = run_result(&d.path().join("out"));
        assert!(result.interrupted && result.jobs[0].ops[0].ios > 0, "the elapsed results");
    }
}

/// The launcher SIGKILLed (nothing of its own runs after that): its child
/// gets SIGTERM, stops as at a Ctrl-C and writes the elapsed results; no
/// measuring process outlives the launcher by more than a few seconds.
#[test]
fn a_sigkilled_launcher_leaves_its_results_and_no_orphan() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    let d = scratch();
    let mut child = Command::new(bin()).args(job("60")).current_dir(d.path()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let series = d.path().join("out/series.csv");
    let end = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&series).map_or(0, |s| s.lines().count()) < 3 {
        assert!(Instant::now() < end, "the run never measured");
        std::thread::sleep(Duration::from_millis(50));
    }
    let inner = measuring(child.id());
    if inner == child.id() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("storbench started no child to measure in");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    while !gone(inner) && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("OWN SESSION | SIGKILL to the launcher | measuring process gone after {} ms", killed.elapsed().as_millis());
    assert!(gone(inner), "the measuring process {inner} outlived its launcher");
    assert!(killed.elapsed() < Duration::from_secs(3), "it stopped as at a Ctrl-C: {:?}", killed.elapsed());
    let result = run_result(&d.path().join("out"));
    assert!(result.interrupted && result.jobs[0].ops[0].ios > 0, "the elapsed results");
}

/// The state letter of /proc/PID/stat (R, S, T for stopped ...).
fn state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat[stat.rfind(')').map_or(0, |i| i + 1)..].trim_start().chars().next().unwrap_or('?')
}

/// The storbench process among `pid`'s descendants (within 10 s), or 0.
fn storbench_below(pid: u32) -> u32 {
    let ours = std::fs::canonicalize(bin()).ok();
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        let mut todo = children(pid);
        while let Some(c) = todo.pop() {
            if std::fs::read_link(format!("/proc/{c}/exe")).ok() == ours {
                return c;
            }
            todo.extend(children(c));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    0
}

/// Wait (bounded) until both processes are stopped or both are running:
/// the state letters they showed.
fn settle(outer: u32, inner: u32, stopped: bool) -> (char, char) {
    let end = Instant::now() + Duration::from_secs(5);
    while ((state(outer) == 'T') != stopped || (state(inner) == 'T') != stopped) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    (state(outer), state(inner))
}

/// Ctrl-Z (SIGTSTP to the launcher, the foreground job of a terminal: run
/// under `script`'s pseudo-terminal as from a shell) stops the measuring
/// child and then the launcher; SIGCONT (`fg`) continues both, the run
/// still ends at a Ctrl-C with its results, and the results say how long
/// it was stopped (those seconds had no I/O: nothing said so).
#[test]
fn ctrl_z_stops_the_measuring_child_and_sigcont_continues_it() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    if !have("script") {
        // util-linux's `script` gives the launcher a terminal to be the foreground job of.
        assert!(std::env::var_os("CI").is_none(), "`script` (util-linux) is missing in CI: Ctrl-Z would not be tested");
        eprintln!("SKIP: no `script` (util-linux) for a pseudo-terminal");
        return;
    }
    let d = scratch();
    let line = format!("'{}' {}; code=$?; exit $code", bin(), job("60").join(" "));
    let mut term = Command::new("script");
    term.args(["-qec", &line, "/dev/null"]).current_dir(d.path()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut term = term.spawn().expect("script");
    let outer = storbench_below(term.id());
    let inner = measuring(outer);
    if outer == 0 || outer == inner {
        kill_all(&mut term);
        panic!("storbench started no child to measure in (launcher {outer}, child {inner})");
    }
    std::thread::sleep(Duration::from_millis(1500));
    signal(outer as i32, libc::SIGTSTP);
    let stopped = settle(outer, inner, true);
    std::thread::sleep(Duration::from_millis(1000));
    signal(outer as i32, libc::SIGCONT);
    let continued = settle(outer, inner, false);
    std::thread::sleep(Duration::from_millis(500));
    signal(outer as i32, libc::SIGINT);
    let end = Instant::now() + Duration::from_secs(20);
    while term.try_wait().expect("wait").is_none() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_all(&mut term);
    eprintln!("OWN SESSION | SIGTSTP, SIGCONT to the launcher | (launcher, child) states {stopped:?} {continued:?}");
    assert!(outer != 0 && outer != inner, "storbench started no child to measure in");
    assert_eq!(stopped, ('T', 'T'), "Ctrl-Z stops both");
    assert!(continued.0 != 'T' && continued.1 != 'T', "SIGCONT continues both: {continued:?}");
    let result = run_result(&d.path().join("out"));
    assert!(result.interrupted && result.jobs[0].ops[0].ios > 0, "the elapsed results");
    // Read as JSON: the warning's words are the results' (`kind`, `seconds`).
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let stops: Vec<f64> =
        doc["warnings"].as_array().into_iter().flatten().filter(|w| w["kind"] == "stopped").filter_map(|w| w["seconds"].as_f64()).collect();
    assert!(matches!(stops[..], [s] if (0.9..30.0).contains(&s)), "the stop is in the results: {stops:?}");
}

/// `kill -TSTP` to a run in the background, with no terminal to `fg` it
/// from (nohup, a CI job): ignored, as the kernel ignores it in an orphaned
/// process group; the run ends normally (it stopped for good, both
/// processes, before).
#[test]
fn sigtstp_to_a_run_without_a_terminal_is_ignored() {
    let _t = turn();
    if !apart_here() {
        return;
    }
    let d = scratch();
    let mut c = Command::new(bin());
    // A process group of its own: never the foreground job of a terminal.
    c.args(job("3")).current_dir(d.path()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    let mut run = c.spawn().expect("storbench");
    let outer = run.id();
    let inner = measuring(outer);
    std::thread::sleep(Duration::from_millis(1000));
    // To both, as `pkill -TSTP storbench` sends it: the child stops only
    // for its launcher, which is not a foreground job here.
    signal(outer as i32, libc::SIGTSTP);
    signal(inner as i32, libc::SIGTSTP);
    std::thread::sleep(Duration::from_millis(500));
    let seen = (state(outer), state(inner));
    let end = Instant::now() + Duration::from_secs(20);
    while run.try_wait().expect("wait").is_none() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = run.try_wait().expect("wait").and_then(|s| s.code());
    if code.is_none() {
        signal(inner as i32, libc::SIGCONT);
        signal(outer as i32, libc::SIGCONT);
        kill_all(&mut run);
    }
    eprintln!("OWN SESSION | SIGTSTP to a background launcher | (launcher, child) states {seen:?} | exit {code:?}");
    assert_ne!(outer, inner, "storbench started no child to measure in");
    assert!(seen.0 != 'T' && seen.1 != 'T', "not stopped: {seen:?}");
    assert_eq!(code, Some(0), "it finished");
}
