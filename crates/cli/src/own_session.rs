//! The measuring process in a session of its own, as fio's jobs are.
//!
//! With the kernel's autogroup scheduling (on by default) each session is
//! one scheduling group: a build in the shell that started storbench shares
//! that shell's CPU with storbench's workers, while fio's jobs, which call
//! setsid(), are groups of their own (butterfly.fio beside a niced build:
//! storbench 771-3134 IOPS, fio 18.3k). So a command that measures I/O runs
//! its measurement in a child that starts a session: this process (a
//! process-group leader when a shell starts it, which setsid refuses) starts
//! itself again with the same arguments and argv[0] (the fio drop-in still
//! answers as fio) and the same standard descriptors, forwards SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT to it (the child has no controlling terminal,
//! so a Ctrl-C reaches only this process) and exits as it did, a death by a
//! signal by the same signal, as a shell reports it. A Ctrl-Z (SIGTSTP)
//! stops the child (which notes the time, so the run's results say how long
//! it was stopped) and then this process (by SIGSTOP), as the shell expects
//! of its job; the SIGCONT of `fg` or `bg` continues this process and is
//! passed on. Only while this process is its terminal's foreground job: a
//! `kill -TSTP` to a background or `nohup`ed run, which nothing would
//! continue, is ignored, as the kernel ignores it in an orphaned group. The
//! child gets SIGTERM
//! if this process dies (PR_SET_PDEATHSIG), a stop like Ctrl-C, so a
//! SIGKILLed launcher still leaves the elapsed results and no orphan.
//!
//! Nothing is done where it is pointless or unwanted: already a session
//! leader (setsid, a container's first process, an ssh session's command),
//! autogroup off or absent, `STORBENCH_SAME_SESSION=1`, or inside the child
//! (the environment marker). `storbench agent` is left out: ssh, containers
//! and service managers start it as a session leader already, and its
//! process id is what they and its users signal and watch.

use nix::sys::signal::{self, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, Command, ExitStatus};

/// Set by the launcher in the child's environment (the launcher's pid): the
/// child does not start itself again, and counts a signal both it and the
/// launcher got (`pkill storbench`) once (runner's interrupt.rs).
const MARKER: &str = storbench_runner::interrupt::LAUNCHER_ENV;
/// `1`: measure in the caller's session, as before (README, `help options`).
const OPT_OUT: &str = "STORBENCH_SAME_SESSION";

/// The signals a user or a supervisor sends to stop a run: forwarded.
const FORWARDED: [Signal; 4] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT];
/// Job control: a stop from the terminal and the continue after it.
const JOB_CONTROL: [Signal; 2] = [Signal::SIGTSTP, Signal::SIGCONT];

/// Run the measurement in a session of its own when the command measures and
/// that helps: returns in the process that measures; the launcher never
/// returns (it exits as its child did).
pub fn measure_apart(as_fio: bool, words: &[String]) {
    if let Some(launcher) = launched_by() {
        answer_to(launcher);
        return;
    }
    if !measures(as_fio, words) || !worth_it() {
        return;
    }
    // Whatever stops the launcher from starting its child (no /proc, a
    // limit on processes), the command still runs, here.
    if let Some(child) = launch() {
        wait_and_exit(child);
    }
}

/// The launcher's pid when this process is its measuring child; the marker
/// is taken out of the environment (still single-threaded here), so what
/// this process starts (ssh to an agent, another storbench) does not take
/// itself for a child of that launcher.
fn launched_by() -> Option<Pid> {
    let pid = std::env::var(MARKER).ok()?.parse::<i32>().ok()?;
    std::env::remove_var(MARKER);
    Some(Pid::from_raw(pid))
}

/// In the child: the launcher's death set to stop this process again (the
/// kernel clears PR_SET_PDEATHSIG when it executes a binary with file
/// capabilities, `setcap` for ioprio or dropping caches), and a launcher
/// already gone is a stop before anything starts.
fn answer_to(launcher: Pid) {
    storbench_runner::interrupt::set_launcher(launcher.as_raw());
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM);
    if nix::unistd::getppid() != launcher {
        say!("storbench: the process that started this run is gone: not starting");
        std::process::exit(crate::error::EXIT_INTERRUPTED);
    }
}

/// Whether a command line measures I/O (its help and version do not).
pub fn measures(as_fio: bool, words: &[String]) -> bool {
    if words.iter().any(|w| informational(w)) {
        return false;
    }
    if as_fio {
        return true;
    }
    let has = |w: &str| words.iter().skip(1).any(|x| x == w);
    match words.first().map(String::as_str) {
        // No command: the quick suite on the default target.
        None => true,
        Some("run" | "sweep" | "replay" | "slo" | "swift-bench" | "fio" | "study" | "baseline") => true,
        Some("rbd") => has("bench"),
        Some("rados") => has("bench") || has("load-gen"),
        _ => false,
    }
}

/// `--help`, `-h`, `--version`, fio's `--parse-only` and its help flags.
fn informational(word: &str) -> bool {
    let name = word.trim_start_matches('-');
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    word.starts_with('-')
        && matches!(name, "h" | "help" | "V" | "version" | "parse-only" | "parse_only" | "cmdhelp" | "enghelp" | "showcmd")
}

/// Not inside the child, not opted out, not a session leader already, and
/// the kernel groups sessions.
fn worth_it() -> bool {
    if std::env::var_os(OPT_OUT).is_some_and(|v| v == "1") {
        return false;
    }
    let leader = nix::unistd::getsid(None).is_ok_and(|s| s == nix::unistd::getpid());
    !leader && autogroup_on()
}

fn autogroup_on() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() != "0")
}

/// The same program, arguments and argv[0] in a new session. The forwarded
/// signals and SIGCHLD are blocked first, so none is lost between the start
/// and the wait. std clears the child's signal mask before running
/// pre_exec, so the child blocks the forwarded ones again until it has its
/// own session (until then a Ctrl-C at the terminal reaches it too), then
/// restores the launcher's mask before it runs. SIGCHLD is the default
/// action in the child and here: an inherited SIG_IGN would make the
/// kernel reap the child and the wait below never end.
fn launch() -> Option<Child> {
    let mut blocked = SigSet::from_iter(FORWARDED.into_iter().chain(JOB_CONTROL));
    blocked.add(Signal::SIGCHLD);
    let mut before = SigSet::empty();
    signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), Some(&mut before)).ok()?;
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| OsString::from("storbench"));
    let launcher = nix::unistd::getpid();
    // SAFETY: restoring the default action installs no handler.
    let _ = unsafe { signal::signal(Signal::SIGCHLD, signal::SigHandler::SigDfl) };
    let forwarded = SigSet::from_iter(FORWARDED);
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg0(argv0).args(args).env(MARKER, launcher.to_string());
    // SAFETY: between fork and exec only async-signal-safe calls: setsid,
    // prctl, getppid and sigprocmask, on values copied before the fork.
    unsafe {
        cmd.pre_exec(move || {
            signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&forwarded), None)?;
            nix::unistd::setsid()?;
            // A stop, not a kill: a SIGKILLed launcher still gets its results.
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)?;
            if nix::unistd::getppid() != launcher {
                // The launcher died before the line above: nobody to answer to.
                return Err(std::io::Error::other("the launcher is gone"));
            }
            signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&before), None)?;
            Ok(())
        });
    }
    match cmd.spawn() {
        Ok(child) => Some(child),
        Err(_) => {
            let _ = signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&before), None);
            None
        }
    }
}

/// Forward every stopping signal and job control to the child until it
/// ends, then end as it did.
fn wait_and_exit(mut child: Child) -> ! {
    let mut waited = SigSet::from_iter(FORWARDED.into_iter().chain(JOB_CONTROL));
    waited.add(Signal::SIGCHLD);
    let pid = Pid::from_raw(child.id() as i32);
    loop {
        match waited.wait() {
            Ok(Signal::SIGCHLD) | Err(_) => match child.try_wait() {
                Ok(Some(status)) => exit_as(status),
                Ok(None) => {}
                // Reaped elsewhere (it cannot be waited for): it is gone.
                Err(_) => std::process::exit(0),
            },
            Ok(Signal::SIGTSTP) if in_the_foreground() => stop_both(pid),
            // No terminal to `fg` it from: a stop would be for good.
            Ok(Signal::SIGTSTP) => {}
            Ok(sig) => {
                let _ = signal::kill(pid, sig);
            }
        }
    }
}

/// Ctrl-Z: the child stopped first (by SIGTSTP, which its handler notes
/// and turns into a SIGSTOP: the kernel drops SIGTSTP's own stop in a
/// process without a terminal), then this process (SIGSTOP: the kernel
/// drops a stop by SIGTSTP in a process group no shell watches, which would
/// leave the child stopped and this process running). The SIGCONT that
/// continues it stays pending (blocked) and is passed on by the wait loop.
fn stop_both(child: Pid) {
    let _ = signal::kill(child, Signal::SIGTSTP);
    let _ = signal::raise(Signal::SIGSTOP);
}

/// Whether this process's group is its terminal's foreground job (the
/// group a Ctrl-Z comes from, and a shell's `fg` continues). Without a
/// controlling terminal (nohup under a service manager, a CI job) or in
/// the background, no.
fn in_the_foreground() -> bool {
    use std::os::fd::AsRawFd as _;
    // Opening /dev/tty fails (ENXIO) without a controlling terminal.
    let Ok(tty) = std::fs::File::open("/dev/tty") else { return false };
    // SAFETY: tcgetpgrp on a descriptor we hold open.
    let foreground = unsafe { libc::tcgetpgrp(tty.as_raw_fd()) };
    foreground > 0 && foreground == nix::unistd::getpgrp().as_raw()
}

/// Exit with the child's code, or die of the signal that ended it (no
/// second core file for a SIGQUIT).
fn exit_as(status: ExitStatus) -> ! {
    if let Some(code) = status.code() {
        std::process::exit(code);
    }
    let raw = status.signal().unwrap_or(libc::SIGTERM);
    if let Ok(sig) = Signal::try_from(raw) {
        let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
        // SAFETY: restoring the default action installs no handler.
        let _ = unsafe { signal::signal(sig, signal::SigHandler::SigDfl) };
        let _ = signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&SigSet::from_iter([sig])), None);
        let _ = signal::raise(sig);
    }
    std::process::exit(128 + raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn commands_that_measure_and_those_that_do_not() {
        for yes in [
            "run --name a",
            "fio --name=a --rw=read",
            "sweep x.toml",
            "rados -p p bench 10 write",
            "rbd bench --io-type read i",
            "study s.toml",
            "",
        ] {
            assert!(measures(false, &words(yes)), "{yes}");
        }
        for no in ["show out", "run --help", "fio --version", "rados -p p cleanup", "agent --fleet-dir f", "help run", "report out"] {
            assert!(!measures(false, &words(no)), "{no}");
        }
        assert!(measures(true, &words("--name=a --rw=read")), "a fio-named argv0");
        assert!(!measures(true, &words("--parse-only j.fio")));
    }
}
