//! Monotonic nanoseconds since a fixed start, read once per batch on the hot path.

use std::time::Instant;

/// Kept as CLOCK_MONOTONIC nanoseconds (the clock `Instant` reads on Linux)
/// so a reading is one vDSO call and a subtraction: `Instant::elapsed`'s
/// timespec arithmetic and u128 conversion were ~1% of a 4 KiB page-cache
/// read (perf), paid once per I/O.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start_ns: u64,
}

impl Clock {
    pub fn at(start: Instant) -> Clock {
        let (raw, now) = (monotonic_ns(), Instant::now());
        // The start may lie ahead (a common start still to come) or behind.
        let start_ns = match start.checked_duration_since(now) {
            Some(ahead) => raw + ahead.as_nanos() as u64,
            None => raw.saturating_sub(now.duration_since(start).as_nanos() as u64),
        };
        Clock { start_ns }
    }
    /// Nanoseconds since the start (0 before it, as `Instant::elapsed`).
    #[inline]
    pub fn now(&self) -> u64 {
        monotonic_ns().saturating_sub(self.start_ns)
    }
}

#[inline]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill; CLOCK_MONOTONIC cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_time_since_a_past_or_future_start_as_instant_does() {
        let past = Instant::now() - Duration::from_millis(300);
        let c = Clock::at(past);
        let (ns, want) = (c.now(), past.elapsed().as_nanos() as u64);
        assert!(ns.abs_diff(want) < 5_000_000, "{ns} vs {want}");
        let future = Clock::at(Instant::now() + Duration::from_secs(5));
        assert_eq!(future.now(), 0, "before the start it reads 0");
        let soon = Instant::now() + Duration::from_millis(20);
        let c = Clock::at(soon);
        std::thread::sleep(Duration::from_millis(40));
        let (ns, want) = (c.now(), soon.elapsed().as_nanos() as u64);
        assert!(ns > 0 && ns.abs_diff(want) < 5_000_000, "{ns} vs {want}");
    }
}
