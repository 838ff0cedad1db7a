//! Arrival schedule for fixed-rate (open-loop) runs, and the byte cap of a
//! throttled (closed-loop) one.
//!
//! Arrivals are scheduled from the start time alone, never from completions, so a
//! slow target cannot slow the schedule down (no coordinated omission). Latency
//! is then measured from each arrival's scheduled time.

use crate::rng::Rng;
use crate::spec::Arrival;

/// Produces scheduled arrival times in nanoseconds since the run's start.
#[derive(Clone, Debug)]
pub struct Schedule {
    interval_ns: f64,
    arrival: Arrival,
    next_ns: f64,
}

impl Schedule {
    /// `ops_per_sec` for this worker; the first arrival is at `start_ns`.
    pub fn new(ops_per_sec: f64, arrival: Arrival, start_ns: u64) -> Schedule {
        Schedule { interval_ns: 1e9 / ops_per_sec, arrival, next_ns: start_ns as f64 }
    }

    /// The next scheduled time, without consuming it.
    #[inline]
    pub fn peek(&self) -> u64 {
        self.next_ns as u64
    }

    /// Consume the next arrival and schedule the one after it.
    #[inline]
    pub fn advance(&mut self, rng: &mut Rng) -> u64 {
        let t = self.next_ns as u64;
        self.next_ns += match self.arrival {
            Arrival::Linear => self.interval_ns,
            Arrival::Poisson => rng.exponential(self.interval_ns),
        };
        t
    }

    /// The worker stood still for `ns` (reading a pass back before the
    /// next, as fio's loops do): every arrival after moves on by as much,
    /// so the pause is no operation's latency.
    pub fn pause(&mut self, ns: u64) {
        self.next_ns += ns as f64;
    }
}

/// A cap on the bytes a worker starts per second (rados load-gen's
/// `--target-throughput`): an operation may start while the bytes started
/// so far, each operation counted by its own length, do not exceed the cap
/// times the time elapsed. A throttle, not arrivals: nothing is scheduled
/// ahead, so latency counts from each issue, as in load-gen.
#[derive(Clone, Debug)]
pub struct ByteCap {
    bytes_per_ns: f64,
    started: u64,
}

impl ByteCap {
    pub fn new(bytes_per_sec: f64) -> ByteCap {
        ByteCap { bytes_per_ns: bytes_per_sec / 1e9, started: 0 }
    }

    /// When the next operation may start, in ns since the run's start.
    #[inline]
    pub fn next_at(&self) -> u64 {
        (self.started as f64 / self.bytes_per_ns) as u64
    }

    /// An operation of `len` bytes started.
    #[inline]
    pub fn started(&mut self, len: u32) {
        self.started += u64::from(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_and_poisson_keep_the_asked_mean_rate() {
        for arrival in [Arrival::Linear, Arrival::Poisson] {
            let mut s = Schedule::new(1000.0, arrival, 0);
            let mut rng = Rng::new(1);
            let mut last = 0;
            for _ in 0..100_000 {
                last = s.advance(&mut rng);
            }
            let rate = 100_000.0 / (last as f64 / 1e9);
            assert!((rate - 1000.0).abs() / 1000.0 < 0.01, "{arrival:?} gave {rate}/s");
        }
    }

    #[test]
    fn a_byte_cap_counts_each_operation_by_its_own_length() {
        // 1 MB/s: after 64 KiB and 4 KiB the next start is 68 KiB later in time.
        let mut c = ByteCap::new(1e6);
        assert_eq!(c.next_at(), 0, "the first starts at once");
        c.started(65536);
        c.started(4096);
        assert_eq!(c.next_at(), 69_632_000, "69,632 bytes at 1 MB/s");
    }
}
