//! A program job's measured phase (fio's exec engine; the job is
//! `workload::exec::ExecSpec`). The worker runs this instead of its I/O
//! loop: the program starts when the job does, and at the job's end (its
//! runtime, a stop, a Ctrl-C) it gets SIGTERM and, `grace` later, SIGKILL.
//! Unlike fio, the signals go to the program's own process group (what it
//! started goes with it), and the program also gets SIGTERM if the worker
//! thread that started it dies (PR_SET_PDEATHSIG), so nothing it started
//! outlives the run. Its output goes to the files the plan checked (fio's
//! JOB.stdout and JOB.stderr), or onto standard error, never onto standard
//! output, where storbench's report goes.

use crate::clock::Clock;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use storbench_workload::exec::ExecSpec;

/// How often the program is looked at while it runs.
const SLICE: Duration = Duration::from_millis(50);

/// Start the program, and stop it at `end_ns` or when `stopped`; `tick` is
/// called at least every slice with the time (the worker closes its
/// intervals there). Returns the phase's end (ns on the job's clock). Err,
/// in words: it could not be started, or it failed before the job's end (a
/// monitor that exits non-zero at once left nothing to show for the job).
pub fn run(
    spec: &ExecSpec,
    argv: &[String],
    out: Option<&[String; 2]>,
    clock: &Clock,
    end_ns: Option<u64>,
    stopped: &dyn Fn() -> bool,
    tick: &mut dyn FnMut(u64),
) -> Result<u64, String> {
    let mut child = start(argv, out)?;
    let limit = end_ns.unwrap_or(u64::MAX);
    loop {
        let now = clock.now();
        tick(now);
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for {}: {e}", argv[0]))? {
            // What it started in its group goes with it.
            signal_group(child.id() as libc::pid_t, libc::SIGKILL);
            return match status.success() {
                true => Ok(now.min(limit)),
                false => Err(format!(
                    "{} failed after {:.1} s ({}){}",
                    argv[0],
                    now as f64 / 1e9,
                    words(status),
                    out.map_or(String::new(), |[_, e]| format!("; its errors are in {e}"))
                )),
            };
        }
        if now >= limit || stopped() {
            stop(&mut child, spec.grace);
            return Ok(now.min(limit));
        }
        let wake = limit.min(now + SLICE.as_nanos() as u64);
        std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
    }
}

fn start(argv: &[String], out: Option<&[String; 2]>) -> Result<Child, String> {
    let (stdout, stderr) = match out {
        Some([o, e]) => (create(o)?, create(e)?),
        // Onto standard error: a report on standard output stays whole.
        None => (onto_stderr()?, Stdio::inherit()),
    };
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(stdout).stderr(stderr).process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| match libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    cmd.spawn().map_err(|e| format!("cannot run {}: {e}", argv[0]))
}

/// A file for the program's output; the plan checked that it was not there
/// (or that the job may replace it).
fn create(path: &str) -> Result<Stdio, String> {
    std::fs::File::create(Path::new(path)).map(Stdio::from).map_err(|e| format!("cannot make {path} for the program's output: {e}"))
}

fn onto_stderr() -> Result<Stdio, String> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| format!("cannot hand standard error to the program: {e}"))?;
    Ok(Stdio::from(fd))
}

/// SIGTERM to its process group, then SIGKILL once `grace` has passed
/// (and to what lingers in its group once it has gone).
fn stop(child: &mut Child, grace: Duration) {
    let group = child.id() as libc::pid_t;
    signal_group(group, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while !matches!(child.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
        std::thread::sleep(SLICE.min(grace));
    }
    signal_group(group, libc::SIGKILL);
    let _ = child.wait();
}

fn signal_group(group: libc::pid_t, sig: libc::c_int) {
    // SAFETY: a signal to a process group this worker made.
    unsafe {
        libc::kill(-group, sig);
    }
}

fn words(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_its_grace_with_what_it_started() {
        let pid_file = std::env::temp_dir().join(format!("sb-exec-test-{}.pid", std::process::id()));
        let clock = Clock::at(Instant::now());
        let spec = ExecSpec { grace: Duration::from_millis(300), ..ExecSpec::default() };
        let t0 = Instant::now();
        let script = format!("trap '' TERM; sleep 30 & echo $! > {}; wait", pid_file.display());
        let at = run(&spec, &argv(&["sh", "-c", &script]), None, &clock, Some(200_000_000), &|| false, &mut |_| {}).unwrap();
        assert_eq!(at, 200_000_000);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        // Gone, or a zombie waiting for whoever adopted it to reap it.
        let running = || std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|s| !s.contains(") Z "));
        let t1 = Instant::now();
        while running() && t1.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(), "the program's own child {child} outlived it");
        let _ = std::fs::remove_file(pid_file);
    }

    #[test]
    fn a_program_that_fails_or_cannot_start_is_an_error_and_one_that_ends_well_ends_the_job() {
        let clock = Clock::at(Instant::now());
        let ten = Some(10_000_000_000);
        let at = run(&ExecSpec::default(), &argv(&["true"]), None, &clock, ten, &|| false, &mut |_| {}).unwrap();
        assert!(at < 5_000_000_000, "{at}");
        let base = std::env::temp_dir().join(format!("sb-exec-test-{}", std::process::id()));
        let out = [format!("{}.stdout", base.display()), format!("{}.stderr", base.display())];
        let err = run(&ExecSpec::default(), &argv(&["sh", "-c", "exit 3"]), None, &clock, ten, &|| false, &mut |_| {}).unwrap_err();
        assert!(err.contains("sh failed after") && err.contains("(exit 3)"), "{err}");
        let err = run(&ExecSpec::default(), &argv(&["/nonexistent/prog"]), Some(&out), &clock, ten, &|| false, &mut |_| {}).unwrap_err();
        assert!(err.contains("cannot run /nonexistent/prog"), "{err}");
        let _ = (std::fs::remove_file(&out[0]), std::fs::remove_file(&out[1]));
    }
}
