//! Arrival schedule for fixed-rate (open-loop) runs.
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
}
