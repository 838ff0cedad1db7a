//! Process faults on this machine: `proc-stop:TARGET` freezes a server
//! process (SIGSTOP, as a hung daemon: it holds its sockets and answers
//! nothing) and `proc-cont:TARGET` thaws it (SIGCONT). TARGET is a process
//! id, or a command name (`/proc/PID/comm`, every process of that name).
//!
//! What a run stopped it thaws when it ends, whatever happened, as it
//! restores the NICs it shaped: a benchmark leaves the machine as it found
//! it. Never storbench itself, the init process or a kernel thread.

use std::collections::BTreeSet;

/// The processes this run stopped and has not continued.
pub type Stopped = BTreeSet<i32>;

/// What a target names now: its process ids (at least one), or why not.
pub fn resolve(target: &str) -> Result<Vec<i32>, String> {
    let pids: Vec<i32> = match target.parse::<i32>() {
        Ok(pid) if pid > 0 => {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                return Err(format!("no process {pid} on this machine"));
            }
            vec![pid]
        }
        Ok(_) => return Err(format!("'{target}' is no process id")),
        Err(_) => named(target),
    };
    if pids.is_empty() {
        return Err(format!("no process named '{target}' on this machine (its name as /proc/PID/comm gives it, or its id)"));
    }
    for &pid in &pids {
        refused(pid)?;
    }
    Ok(pids)
}

/// Every process whose command name is `name`.
fn named(name: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out: Vec<i32> =
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter(|pid| comm(*pid).is_some_and(|c| c == name)).collect();
    out.sort_unstable();
    out
}

/// The kernel's flag of its own threads (`PF_KTHREAD`, linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// Processes a fault must never freeze: this one (it would never thaw
/// them), init, and kernel threads.
fn refused(pid: i32) -> Result<(), String> {
    // A thread's id names a /proc entry too, and stopping it stops its
    // whole process: only a process's own id is taken.
    match tgid(pid) {
        Some(t) if t != pid => return Err(format!("{pid} is a thread of process {t}; give the process's id")),
        _ => {}
    }
    if pid == std::process::id() as i32 {
        return Err("that is storbench itself".into());
    }
    if pid == 1 {
        return Err("process 1 is the init process; stopping it stops the machine".into());
    }
    if flags(pid).is_some_and(|f| f & PF_KTHREAD != 0) {
        return Err(format!("process {pid} is a kernel thread"));
    }
    Ok(())
}

/// The process a task id belongs to (`Tgid:` in /proc/PID/status).
fn tgid(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:"))?.trim().parse().ok()
}

/// A process's flags, the ninth field of /proc/PID/stat (the seventh after
/// the command name, which may hold spaces and parentheses).
fn flags(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(6)?.parse().ok()
}

/// Checked with the flags: the target is there now, may be stopped, and
/// this process may signal it (signal 0: the permission check alone).
pub fn check(target: &str) -> Result<(), String> {
    for pid in resolve(target)? {
        // SAFETY: kill(2) with signal 0 sends nothing.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return Err(format!("process {pid}: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Whether a monitor's `--allow-signal` list lets a run signal what
/// `target` names now: every process of it must have a command name in
/// `allowed` (a process id is judged by its name too).
pub fn permitted(target: &str, allowed: &[String]) -> Result<(), String> {
    let how = "start the monitor with --allow-signal NAME,... naming it";
    if allowed.is_empty() {
        return Err(format!("this monitor lets no run signal its processes; {how}"));
    }
    for pid in resolve(target)? {
        let name = comm(pid).unwrap_or_default();
        if !allowed.contains(&name) {
            return Err(format!("process {pid} ('{name}') is not among the names this monitor allows ({}); {how}", allowed.join(", ")));
        }
    }
    Ok(())
}

/// A process's command name (`/proc/PID/comm`).
fn comm(pid: i32) -> Option<String> {
    Some(std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?.trim_end().to_string())
}

/// Stop (SIGSTOP) or continue (SIGCONT) what `target` names now; the ids
/// stopped are kept in `stopped` (continued ones taken out). The answer
/// names the ids signalled.
pub fn signal(target: &str, stop: bool, stopped: &mut Stopped) -> Result<String, String> {
    let pids = resolve(target)?;
    let sig = if stop { libc::SIGSTOP } else { libc::SIGCONT };
    let mut done = Vec::new();
    for pid in pids {
        // SAFETY: kill(2) takes plain integers; the pid was checked above.
        if unsafe { libc::kill(pid, sig) } != 0 {
            let before = if done.is_empty() { String::new() } else { format!(" (after signalling {})", done.join(", ")) };
            return Err(format!("process {pid}: {}{before}", std::io::Error::last_os_error()));
        }
        if stop {
            stopped.insert(pid);
        } else {
            stopped.remove(&pid);
        }
        done.push(pid.to_string());
    }
    Ok(format!("{} process {}", if stop { "stopped" } else { "continued" }, done.join(", ")))
}

/// Continue one process this run stopped (at its end).
pub fn thaw(pid: i32) -> Result<String, String> {
    // SAFETY: as above; a process that ended meanwhile gives ESRCH, fine.
    match unsafe { libc::kill(pid, libc::SIGCONT) } {
        0 => Ok(format!("continued process {pid}")),
        _ if std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) => Ok(format!("process {pid} had ended")),
        _ => Err(format!("process {pid}: {}; run `kill -CONT {pid}`", std::io::Error::last_os_error())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(')').next().unwrap().trim_start().chars().next().unwrap()
    }

    #[test]
    fn a_process_is_stopped_and_continued_by_id_and_kept_until_then() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let mut stopped = Stopped::new();
        let said = signal(&pid.to_string(), true, &mut stopped).unwrap();
        assert_eq!(said, format!("stopped process {pid}"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(state(pid), 'T', "stopped");
        assert!(stopped.contains(&(pid as i32)));
        signal(&pid.to_string(), false, &mut stopped).unwrap();
        assert!(stopped.is_empty());
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(state(pid), 'S', "running again");
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn storbench_init_kernel_threads_and_missing_ones_are_refused() {
        assert!(resolve(&std::process::id().to_string()).unwrap_err().contains("storbench itself"));
        assert!(resolve("1").unwrap_err().contains("init"));
        // kthreadd, by name: a kernel thread wherever the kernel's are seen.
        if let Some(k) = named("kthreadd").first() {
            assert!(resolve(&k.to_string()).unwrap_err().contains("kernel thread"), "{k}");
        }
        assert_eq!(flags(std::process::id() as i32).map(|f| f & PF_KTHREAD), Some(0));
        assert!(resolve("no-such-daemon-x").unwrap_err().contains("no process named 'no-such-daemon-x'"));
        assert!(resolve("0").is_err() && resolve("-5").is_err());
        // A thread of this test's process is no process of its own.
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            tx.send(unsafe { libc::gettid() }).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(200));
        });
        let tid = rx.recv().unwrap();
        assert!(resolve(&tid.to_string()).unwrap_err().contains("is a thread of process"), "{tid}");
        t.join().unwrap();
    }

    #[test]
    fn a_monitor_signals_only_the_names_it_allows() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id().to_string();
        assert!(permitted(&pid, &[]).unwrap_err().contains("lets no run signal"));
        let e = permitted(&pid, &["ceph-osd".into()]).unwrap_err();
        assert!(e.contains("('sleep') is not among the names this monitor allows (ceph-osd)"), "{e}");
        assert_eq!(permitted(&pid, &["ceph-osd".into(), "sleep".into()]), Ok(()), "by id, judged by its name");
        assert!(permitted("no-such-daemon-x", &["no-such-daemon-x".into()]).unwrap_err().contains("no process named"));
        let _ = child.kill();
        let _ = child.wait();
    }
}
