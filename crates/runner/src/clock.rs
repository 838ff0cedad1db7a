//! Monotonic nanoseconds since a fixed start, read once per batch on the hot path.

use std::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn at(start: Instant) -> Clock {
        Clock { start }
    }
    /// Nanoseconds since the start.
    #[inline]
    pub fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// How early a paced worker wakes before a deadline and spins the rest of the
/// way: a sleeping thread wakes 5-60 us late on a busy virtual machine, and in
/// fixed-rate runs that lateness would be counted as the target's latency.
pub const SPIN_NS: u64 = 50_000;

/// Wait until `deadline_ns`: sleep most of the way, spin the last [`SPIN_NS`].
pub fn sleep_until(clock: &Clock, deadline_ns: u64) {
    let now = clock.now();
    if deadline_ns > now + SPIN_NS {
        std::thread::sleep(std::time::Duration::from_nanos(deadline_ns - now - SPIN_NS));
    }
    while clock.now() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// Lower this thread's timer slack from the default 50 µs to 1 µs, so paced
/// (fixed-rate, think time) sleeps wake when asked.
pub fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
}
