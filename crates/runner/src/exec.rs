//! A program job's measured phase (fio's exec engine; the job is
//! `workload::exec::ExecSpec`). The worker runs this instead of its I/O
//! loop: the program starts when the job does, and at the job's end (its
//! runtime, a stop, a Ctrl-C) it gets SIGTERM and, `grace` later, SIGKILL.
//! Unlike fio, the signals go to the program's own process group (what it
//! started goes with it), and nothing it started outlives the run: the
//! group is killed whatever way the phase ends, a second Ctrl-C cuts the
//! grace short, and the program gets SIGKILL if the worker thread that
//! started it dies (PR_SET_PDEATHSIG). Its output goes to the files the plan checked (fio's
//! JOB.stdout and JOB.stderr, made new unless the job may replace files), or
//! onto standard error, never onto standard output, where storbench's report
//! goes.

use crate::clock::Clock;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use storbench_workload::exec::ExecSpec;

/// How often the program is looked at while it runs.
const SLICE: Duration = Duration::from_millis(50);

/// Where the program's output goes: files (fio's JOB.stdout and
/// JOB.stderr), replaced only when the job may replace files.
pub struct Output<'a> {
    pub files: &'a [String; 2],
    pub replace: bool,
}

/// When the program stops: at `end_ns` (ns on the job's clock) or once
/// `stopped`; `aborted` (a second Ctrl-C) cuts its grace short.
pub struct Ends<'a> {
    pub end_ns: Option<u64>,
    pub stopped: &'a dyn Fn() -> bool,
    pub aborted: &'a dyn Fn() -> bool,
}

/// Start the program and stop it when `ends` says; `tick` is called at
/// least every slice with the time (the worker closes its intervals
/// there). Returns the phase's end (ns on the job's clock). Err, in words:
/// it could not be started, or it failed before the job's end (a monitor
/// that exits non-zero at once left nothing to show for the job).
pub fn run(
    spec: &ExecSpec,
    argv: &[String],
    out: Option<Output>,
    clock: &Clock,
    ends: Ends,
    tick: &mut dyn FnMut(u64),
) -> Result<u64, String> {
    let errors = out.as_ref().map_or(String::new(), |o| format!("; its errors are in {}", o.files[1]));
    let mut group = Group(start(argv, out)?);
    let limit = ends.end_ns.unwrap_or(u64::MAX);
    loop {
        let now = clock.now();
        tick(now);
        if let Some(status) = group.0.try_wait().map_err(|e| format!("waiting for {}: {e}", argv[0]))? {
            return match status.success() {
                true => Ok(now.min(limit)),
                false => Err(format!("{} failed after {:.1} s ({}){errors}", argv[0], now as f64 / 1e9, words(status))),
            };
        }
        if now >= limit || (ends.stopped)() {
            group.stop(spec.grace, ends.aborted);
            return Ok(now.min(limit));
        }
        let wake = limit.min(now + SLICE.as_nanos() as u64);
        std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
    }
}

/// The program, leader of its own process group: whatever way the phase
/// ends (a return, an error, a panic), the group is killed and the program
/// reaped when this goes.
struct Group(Child);

impl Group {
    /// SIGTERM to the group, then SIGKILL (on drop) once the program has
    /// gone, `grace` has passed or the run is aborted.
    fn stop(&mut self, grace: Duration, aborted: &dyn Fn() -> bool) {
        signal_group(self.0.id() as libc::pid_t, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while !matches!(self.0.try_wait(), Ok(Some(_))) && Instant::now() < deadline && !aborted() {
            std::thread::sleep(SLICE.min(grace));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // What it started in its group goes with it, even after it has gone.
        signal_group(self.0.id() as libc::pid_t, libc::SIGKILL);
        let _ = self.0.wait();
    }
}

fn start(argv: &[String], out: Option<Output>) -> Result<Child, String> {
    let (stdout, stderr) = match &out {
        Some(o) => {
            let made = create(&o.files[0], o.replace)?;
            match create(&o.files[1], o.replace) {
                Ok(e) => (made, e),
                Err(e) => {
                    let _ = std::fs::remove_file(&o.files[0]);
                    return Err(e);
                }
            }
        }
        // Onto standard error: a report on standard output stays whole.
        None => (onto_stderr()?, Stdio::inherit()),
    };
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(stdout).stderr(stderr).process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| match libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    cmd.spawn().map_err(|e| {
        // Nothing ran: the empty files it would have written go.
        if let Some(o) = &out {
            let _ = (std::fs::remove_file(&o.files[0]), std::fs::remove_file(&o.files[1]));
        }
        format!("cannot run {}: {e}", argv[0])
    })
}

/// A file for the program's output: made new (the plan checked that none
/// was there, and one that appeared since is not replaced) unless the job
/// may replace files.
fn create(path: &str, replace: bool) -> Result<Stdio, String> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    match replace {
        true => open.create(true).truncate(true),
        false => open.create_new(true),
    };
    open.open(Path::new(path)).map(Stdio::from).map_err(|e| format!("cannot make {path} for the program's output: {e}"))
}

fn onto_stderr() -> Result<Stdio, String> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| format!("cannot hand standard error to the program: {e}"))?;
    Ok(Stdio::from(fd))
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

    fn ends<'a>(end_ns: Option<u64>, stopped: &'a dyn Fn() -> bool) -> Ends<'a> {
        Ends { end_ns, stopped, aborted: &|| false }
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_its_grace_with_what_it_started() {
        let pid_file = std::env::temp_dir().join(format!("sb-exec-test-{}.pid", std::process::id()));
        let _ = std::fs::remove_file(&pid_file);
        let clock = Clock::at(Instant::now());
        let spec = ExecSpec { grace: Duration::from_millis(300), ..ExecSpec::default() };
        let script = format!("trap '' TERM; sleep 30 & echo $! > {}.tmp; mv {0}.tmp {0}; wait", pid_file.display());
        // Stopped once the shell has trapped TERM and started its child.
        let t0 = Instant::now();
        let up = || pid_file.exists();
        run(&spec, &argv(&["sh", "-c", &script]), None, &clock, ends(None, &up), &mut |_| {}).unwrap();
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
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
        let at = run(&ExecSpec::default(), &argv(&["true"]), None, &clock, ends(ten, &|| false), &mut |_| {}).unwrap();
        assert!(at < 5_000_000_000, "{at}");
        let err = run(&ExecSpec::default(), &argv(&["sh", "-c", "exit 3"]), None, &clock, ends(ten, &|| false), &mut |_| {}).unwrap_err();
        assert!(err.contains("sh failed after") && err.contains("(exit 3)"), "{err}");
        let base = std::env::temp_dir().join(format!("sb-exec-test-{}", std::process::id()));
        let files = [format!("{}.stdout", base.display()), format!("{}.stderr", base.display())];
        let out = Output { files: &files, replace: false };
        let err =
            run(&ExecSpec::default(), &argv(&["/nonexistent/prog"]), Some(out), &clock, ends(ten, &|| false), &mut |_| {}).unwrap_err();
        assert!(err.contains("cannot run /nonexistent/prog"), "{err}");
        assert!(!Path::new(&files[0]).exists() && !Path::new(&files[1]).exists(), "the files of a program that never ran are gone");
        // A file that appeared after the plan is not replaced.
        std::fs::write(&files[0], "someone's").unwrap();
        let out = Output { files: &files, replace: false };
        let err = run(&ExecSpec::default(), &argv(&["true"]), Some(out), &clock, ends(ten, &|| false), &mut |_| {}).unwrap_err();
        assert!(err.contains("cannot make") && std::fs::read_to_string(&files[0]).unwrap() == "someone's", "{err}");
        let _ = std::fs::remove_file(&files[0]);
    }
}
