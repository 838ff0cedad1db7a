//! fio's `rate_min` / `rate_iops_min`, judged where and as fio judges them
//! (backend.c, `check_min_rate`): at completions, reads and writes each on
//! their own, over the time since the previous judgement once a rate cycle
//! (one second) has passed, and not in the first two seconds of the
//! measured phase. A job slower than one I/O a second is thus judged over
//! the gap between its I/Os, not on a second in which none completed.

use storbench_workload::spec::RateLimit;

const SETTLE_NS: u64 = 2_000_000_000;
/// fio's `ratecycle` default (storbench refuses other values).
const CYCLE_NS: u64 = 1_000_000_000;

/// What one direction did, and where it stood at the previous judgement.
#[derive(Clone, Copy, Default)]
struct Direction {
    bytes: u64,
    ios: u64,
    /// (time, bytes, ios) at the previous judgement.
    last: Option<(u64, u64, u64)>,
}

/// One worker's minimum-rate watch.
pub struct MinRate {
    min: RateLimit,
    /// When the measured phase starts (ns since the job's start).
    start_ns: u64,
    dirs: [Direction; 2],
}

impl MinRate {
    pub fn new(min: RateLimit, start_ns: u64) -> MinRate {
        MinRate { min, start_ns, dirs: [Direction::default(); 2] }
    }

    /// A read (`dir` 0) or write (1) of `bytes` completed at `now`: judge
    /// every direction that has done I/O, as fio does after each completion.
    /// The failure, said as fio says it, when one fell below the minimum.
    pub fn completed(&mut self, dir: usize, bytes: u64, now: u64) -> Option<String> {
        if now < self.start_ns {
            return None;
        }
        self.dirs[dir].bytes += bytes;
        self.dirs[dir].ios += 1;
        if now - self.start_ns < SETTLE_NS {
            return None;
        }
        for (i, d) in self.dirs.iter_mut().enumerate() {
            if d.bytes == 0 {
                continue;
            }
            if let Some((t, bytes, ios)) = d.last {
                let spent = now - t;
                if spent < CYCLE_NS {
                    continue;
                }
                let secs = spent as f64 / 1e9;
                let (done, want, unit) = match self.min {
                    RateLimit::Bytes(b) => ((d.bytes - bytes) as f64 / secs, b, "bytes/s"),
                    RateLimit::Iops(n) => ((d.ios - ios) as f64 / secs, n, "IOPS"),
                };
                if done < want {
                    let name = if i == 0 { "reads" } else { "writes" };
                    let at = now as f64 / 1e9;
                    return Some(format!(
                        "rate_min not met: {name} did {done:.0} {unit} over the {secs:.1} s ending at {at:.1} s, below {want:.0}"
                    ));
                }
            }
            d.last = Some((now, d.bytes, d.ios));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn judged_over_the_gap_between_completions_after_two_seconds() {
        // 4 KiB every 3.3 s is 1250 bytes/s: never a failure against 1024,
        // though most seconds see no I/O (fio's 1mbs_clients.fio).
        let mut m = MinRate::new(RateLimit::Bytes(1024.0), 0);
        for k in 0..10u64 {
            assert_eq!(m.completed(0, 4096, k * 3_276_800_000), None, "I/O {k}");
        }
        let mut m = MinRate::new(RateLimit::Bytes(2048.0), 0);
        assert_eq!(m.completed(0, 4096, 2 * S), None, "the first judgement only records");
        assert_eq!(m.completed(0, 4096, 2 * S + S / 2), None, "within a cycle");
        let e = m.completed(0, 4096, 7 * S).unwrap();
        assert!(e.contains("reads did 1638 bytes/s over the 5.0 s ending at 7.0 s, below 2048"), "{e}");
    }

    #[test]
    fn each_direction_on_its_own_and_nothing_before_the_measured_phase() {
        let mut m = MinRate::new(RateLimit::Iops(2.0), 10 * S);
        assert_eq!(m.completed(1, 4096, 5 * S), None);
        assert_eq!(m.completed(0, 4096, 12 * S), None);
        assert_eq!(m.completed(1, 4096, 12 * S + 1), None);
        for k in 1..=30 {
            assert_eq!(m.completed(0, 4096, 12 * S + k * S / 30), None, "30 reads a second");
        }
        let e = m.completed(0, 4096, 13 * S + S / 2).unwrap();
        assert!(e.starts_with("rate_min not met: writes did 0 IOPS"), "{e}");
    }
}
