//! Ctrl-C, SIGTERM and SIGHUP. Signals belong to the process, so the handler only
//! counts them; each run takes a [`Scope`] when it starts and sees only the
//! signals that came after. The coordinator turns the first into a `Stop`
//! message to its agents (the measured phase ends, clean-up still runs) and
//! the second into `Abort` (clean-up is cut short too). A later run (the
//! DELETE phase of swift-bench after an interrupted PUT phase) starts afresh.
//!
//! A measuring process started in a session of its own by its launcher
//! (the cli's own_session.rs, which names itself in [`LAUNCHER_ENV`]) gets
//! its signals passed on by the launcher. A signal sent to both (`pkill
//! storbench`, a service manager stopping every process of its unit) then
//! arrives twice, once directly and once passed on: the second of such a
//! pair, within a second, is not counted, so it stays a stop and not an
//! abort. Two signals from the same side (two Ctrl-Cs) always count twice.
//!
//! Such a process is stopped by its launcher at a Ctrl-Z with a SIGTSTP
//! (its handler notes the time and stops the process with SIGSTOP) and
//! continued with a SIGCONT (its handler notes how long the stop lasted):
//! a run's seconds with no I/O then, and its operations in flight that got
//! the stop as latency, are explained in its results ([`Pause`]).

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Once;

/// The launcher's pid, set in the measuring process's environment (read once, at start, by [`set_launcher`]'s caller).
pub const LAUNCHER_ENV: &str = "STORBENCH_LAUNCHER_PID";

static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// The launcher's pid (0: none).
static LAUNCHER: AtomicI32 = AtomicI32::new(0);
/// The last counted signal: milliseconds since boot << 9 | from the launcher << 8 | its number.
static LAST: AtomicU64 = AtomicU64::new(0);

/// How close together the two deliveries of one signal are taken to be.
const PAIR_MS: u64 = 1000;

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let sender = if info.is_null() { 0 } else { unsafe { (*info).si_pid() } };
    let launcher = LAUNCHER.load(Ordering::Relaxed);
    if count(sig, launcher != 0 && sender == launcher, now_ms()) {
        SIGNALS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Whether a signal counts: not if it is the other delivery of the last one.
fn count(sig: libc::c_int, from_launcher: bool, now: u64) -> bool {
    let this = (now << 9) | (u64::from(from_launcher) << 8) | (sig as u64 & 0xff);
    let last = LAST.swap(this, Ordering::Relaxed);
    let twin = last != 0 && last & 0xff == this & 0xff && (last >> 8) & 1 != (this >> 8) & 1 && now.saturating_sub(last >> 9) < PAIR_MS;
    if twin {
        // A third signal after the pair counts again.
        LAST.store(0, Ordering::Relaxed);
    }
    !twin
}

/// CLOCK_MONOTONIC in milliseconds (clock_gettime is async-signal-safe).
fn now_ms() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC) / 1_000_000 + 1
}

/// A clock in nanoseconds (clock_gettime is async-signal-safe).
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the struct we pass.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A stop of the measuring process (Ctrl-Z) and how long it lasted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pause {
    /// When it began (Unix time, nanoseconds).
    pub at_unix_ns: u64,
    pub ns: u64,
}

/// The stop under way: (Unix time, CLOCK_MONOTONIC) in ns; 0 when running.
static STOPPED_AT: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// The first pauses of the process (later ones are counted only).
const PAUSE_SLOTS: usize = 64;
static PAUSE_AT: [AtomicU64; PAUSE_SLOTS] = [const { AtomicU64::new(0) }; PAUSE_SLOTS];
static PAUSE_NS: [AtomicU64; PAUSE_SLOTS] = [const { AtomicU64::new(0) }; PAUSE_SLOTS];
static PAUSES: AtomicUsize = AtomicUsize::new(0);

/// SIGTSTP from the launcher: note the time, then stop (SIGTSTP's own stop
/// is dropped in a process without a terminal; the launcher decided). One
/// from anyone else (`pkill -TSTP storbench`) is ignored, as the kernel
/// ignores it for a process of an orphaned group: the launcher would not
/// stop with it, and nothing could continue the run.
extern "C" fn on_stop(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let sender = if info.is_null() { 0 } else { unsafe { (*info).si_pid() } };
    if sender != LAUNCHER.load(Ordering::Relaxed) {
        return;
    }
    STOPPED_AT[0].store(clock_ns(libc::CLOCK_REALTIME), Ordering::Relaxed);
    STOPPED_AT[1].store(clock_ns(libc::CLOCK_MONOTONIC), Ordering::Relaxed);
    // SAFETY: raise is async-signal-safe.
    unsafe { libc::raise(libc::SIGSTOP) };
}

/// SIGCONT (the kernel has continued the process already): the stop's length.
extern "C" fn on_continue(_: libc::c_int) {
    let mono = STOPPED_AT[1].swap(0, Ordering::Relaxed);
    if mono == 0 {
        return;
    }
    let n = PAUSES.fetch_add(1, Ordering::Relaxed);
    if n < PAUSE_SLOTS {
        PAUSE_NS[n].store(clock_ns(libc::CLOCK_MONOTONIC).saturating_sub(mono), Ordering::Relaxed);
        PAUSE_AT[n].store(STOPPED_AT[0].load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// Install `on_signal` for `sig`; the action it replaces.
fn install(sig: libc::c_int) -> libc::sighandler_t {
    install_as(sig, on_signal as *const () as libc::sighandler_t, libc::SA_SIGINFO)
}

/// Install `handler` for `sig` (restarting interrupted calls); the action it replaces.
fn install_as(sig: libc::c_int, handler: libc::sighandler_t, flags: libc::c_int) -> libc::sighandler_t {
    // SAFETY: a zeroed sigaction with an empty mask is valid; the handlers
    // only touch atomics and call clock_gettime and raise, all async-signal-safe.
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = handler;
        new.sa_flags = flags | libc::SA_RESTART;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &new, &mut old);
        old.sa_sigaction
    }
}

/// This process measures for a launcher (the cli's own_session.rs, which
/// read [`LAUNCHER_ENV`] and took it out of the environment, so processes
/// this one starts do not inherit it): a signal from it is a forwarded copy.
pub fn set_launcher(pid: i32) {
    LAUNCHER.store(pid, Ordering::Relaxed);
    install_as(libc::SIGTSTP, on_stop as *const () as libc::sighandler_t, libc::SA_SIGINFO);
    install_as(libc::SIGCONT, on_continue as *const () as libc::sighandler_t, 0);
}

/// Install the handlers, once per process.
fn install_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        install(libc::SIGINT);
        install(libc::SIGTERM);
        // A hang-up (the terminal, or the SSH session an agent runs in,
        // went away) stops gracefully too: what was prepared is cleaned
        // up. Unless it was ignored when we started (nohup): then the
        // user wants the run to outlive the terminal.
        if install(libc::SIGHUP) == libc::SIG_IGN {
            // SAFETY: ignoring a signal installs no handler.
            unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
        }
    });
}

/// The signals one run answers to: those that arrive after it began.
#[derive(Debug)]
pub struct Scope {
    mark: u32,
    /// Pauses of the process before the run began.
    paused: usize,
}

impl Scope {
    /// Start listening (handlers installed on first use).
    pub fn begin() -> Scope {
        install_handlers();
        Scope { mark: SIGNALS.load(Ordering::Relaxed), paused: PAUSES.load(Ordering::Relaxed) }
    }

    /// The stops (Ctrl-Z) since the run began, as far as they are kept.
    pub fn pauses(&self) -> Vec<Pause> {
        let n = PAUSES.load(Ordering::Relaxed).min(PAUSE_SLOTS);
        (self.paused.min(n)..n)
            .map(|i| Pause { at_unix_ns: PAUSE_AT[i].load(Ordering::Relaxed), ns: PAUSE_NS[i].load(Ordering::Relaxed) })
            .filter(|p| p.at_unix_ns > 0)
            .collect()
    }

    /// Signals since the run began: 0 none, 1 stop, 2 or more abort.
    pub fn level(&self) -> u32 {
        SIGNALS.load(Ordering::Relaxed).wrapping_sub(self.mark)
    }

    pub fn interrupted(&self) -> bool {
        self.level() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_sees_only_the_signals_after_it_began() {
        let first = Scope::begin();
        SIGNALS.fetch_add(1, Ordering::Relaxed);
        assert_eq!(first.level(), 1);
        let second = Scope::begin();
        assert!(!second.interrupted(), "an earlier run's Ctrl-C does not stop a later one");
        SIGNALS.fetch_add(1, Ordering::Relaxed);
        assert_eq!((first.level(), second.level()), (2, 1));
    }

    #[test]
    fn a_signal_delivered_directly_and_passed_on_counts_once() {
        let t = 1_000_000;
        assert!(count(libc::SIGTERM, false, t), "the first");
        assert!(!count(libc::SIGTERM, true, t + 5), "the launcher passing the same one on");
        assert!(count(libc::SIGTERM, true, t + 10), "a third: a second stop");
        assert!(count(libc::SIGINT, true, t + 20) && count(libc::SIGINT, true, t + 30), "two Ctrl-Cs, both from the launcher");
        assert!(count(libc::SIGINT, false, t + 40 + PAIR_MS), "a direct one long after is its own");
        assert!(count(libc::SIGTERM, true, t + 50 + PAIR_MS), "another signal is no twin");
    }
}
