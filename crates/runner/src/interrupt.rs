//! Ctrl-C, SIGTERM and SIGHUP. Signals belong to the process, so the handler only
//! counts them; each run takes a [`Scope`] when it starts and sees only the
//! signals that came after. The coordinator turns the first into a `Stop`
//! message to its agents (the measured phase ends, clean-up still runs) and
//! the second into `Abort` (clean-up is cut short too). A later run (the
//! DELETE phase of swift-bench after an interrupted PUT phase) starts afresh.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

static SIGNALS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

/// Install the handlers, once per process.
fn install_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handler only adds to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
            // A hang-up (the terminal, or the SSH session an agent runs in,
            // went away) stops gracefully too: what was prepared is cleaned
            // up. Unless it was ignored when we started (nohup): then the
            // user wants the run to outlive the terminal.
            let before = libc::signal(libc::SIGHUP, on_signal as *const () as libc::sighandler_t);
            if before == libc::SIG_IGN {
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
            }
        }
    });
}

/// The signals one run answers to: those that arrive after it began.
#[derive(Debug)]
pub struct Scope {
    mark: u32,
}

impl Scope {
    /// Start listening (handlers installed on first use).
    pub fn begin() -> Scope {
        install_handlers();
        Scope { mark: SIGNALS.load(Ordering::Relaxed) }
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
}
