//! Stopping a run: Ctrl-C (SIGINT) and SIGTERM set one flag the workers poll
//! once per batch; they then finish in-flight I/O and hand over what they measured.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Install the handlers (idempotent). A second Ctrl-C still stops the run the
/// same way: results are always written.
pub fn install_handlers() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

#[inline]
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Ask every worker to stop (as a signal would).
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}
