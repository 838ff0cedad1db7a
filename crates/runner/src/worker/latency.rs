//! fio's `latency_target` inside a job (io_u.c lat_target_*): the worker
//! starts at queue depth 1 and, every `latency_window`, doubles it (or
//! bisects towards the last depth that failed) while at least
//! `latency_percentile` of the I/Os completed within the target, and
//! halves towards the last that passed when fewer did. Once a window
//! leaves the depth where it was, the job quiesces, its figures start
//! over at that depth (fio's "final run", stats reset), and the next time
//! it settles the job ends. With `latency_percentile=100` one I/O over the
//! target ramps down at once, and at depth 1 ends the job with fio's
//! "max latency exceeded". With `latency_run` it never settles.

use storbench_workload::LatencyTarget;

/// What a window's verdict asks of the worker.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    Go,
    /// The depth settled: quiesce, then start the figures over (fio's
    /// reset_all_stats).
    Reset,
    /// It settled again after the reset: the job is done.
    Done,
}

#[derive(Debug)]
pub(super) struct LatencyCtl {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_adjusting: bool,
    max: u32,
    /// The depth the worker may have in flight now (fio's latency_qd).
    pub(super) qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    window_start: u64,
    ios: u64,
    failed: u64,
    /// The figures were reset at the settled depth (latency_end_run).
    end_run: bool,
    /// Nothing is issued until what is in flight completes (io_u_quiesce).
    pub(super) quiesce: bool,
}

impl LatencyCtl {
    pub(super) fn new(t: &LatencyTarget, max_qd: u32, now: u64) -> LatencyCtl {
        LatencyCtl {
            target_ns: t.target_ns,
            window_ns: t.window_ns.unwrap_or(0),
            percentile: t.percentile,
            keep_adjusting: t.keep_adjusting,
            max: max_qd.max(1),
            qd: 1,
            low: 1,
            high: max_qd.max(1),
            stable: 0,
            window_start: now,
            ios: 0,
            failed: 0,
            end_run: false,
            quiesce: false,
        }
    }

    /// Whether another I/O may go out with `in_flight` already out.
    #[inline]
    pub(super) fn holds(&mut self, in_flight: usize) -> bool {
        if self.quiesce && in_flight == 0 {
            self.quiesce = false;
        }
        self.quiesce || in_flight >= self.qd as usize
    }

    /// A read or write completed after `latency_ns`; `Err` when fio would
    /// end the job (every I/O must be under the target and depth 1 is not).
    #[inline]
    pub(super) fn completed(&mut self, latency_ns: u64, now: u64) -> Result<(), String> {
        self.ios += 1;
        if latency_ns <= self.target_ns {
            return Ok(());
        }
        if self.percentile < 100.0 {
            self.failed += 1;
            return Ok(());
        }
        if self.qd == 1 {
            // The job ends on it: no window may count it a pass meanwhile.
            self.failed += 1;
            return Err(format!(
                "latency of {latency_ns} ns exceeds latency_target ({} ns) at queue depth 1 {}",
                self.target_ns,
                storbench_model::FIO_LATENCY_EXCEEDED
            ));
        }
        self.ramp_down(now);
        Ok(())
    }

    /// fio's lat_target_check, once per loop: a window's verdict.
    #[inline]
    pub(super) fn check(&mut self, now: u64) -> Step {
        if now.saturating_sub(self.window_start) < self.window_ns {
            return Step::Go;
        }
        // No I/O in the window is a failure, as fio's 0/0 compares false.
        let passed = self.ios > 0 && (self.ios - self.failed) as f64 * 100.0 / self.ios as f64 >= self.percentile;
        if !passed {
            if self.qd > 1 {
                self.ramp_down(now);
            } else {
                self.new_window(now);
            }
            return Step::Go;
        }
        self.ramp_up(now)
    }

    fn ramp_down(&mut self, now: u64) {
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.stable = 0;
        self.quiesce = true;
        self.new_window(now);
    }

    fn ramp_up(&mut self, now: u64) -> Step {
        let was = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            // Stuck one below a failing depth: try it again after three passes.
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = match self.high != self.max {
            true => (self.qd + self.high) / 2,
            false => self.qd * 2,
        }
        .min(self.max);
        self.new_window(now);
        if self.qd != was || self.keep_adjusting {
            return Step::Go;
        }
        if self.end_run {
            return Step::Done;
        }
        self.end_run = true;
        self.quiesce = true;
        Step::Reset
    }

    pub(super) fn new_window(&mut self, now: u64) {
        (self.window_start, self.ios, self.failed) = (now, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl(percentile: f64, max: u32) -> LatencyCtl {
        LatencyCtl::new(&LatencyTarget { target_ns: 1000, window_ns: Some(10), percentile, keep_adjusting: false }, max, 0)
    }

    /// Every window passes: 1, 2, 4, ..., 128, then 128 again settles
    /// (reset), and again ends the job: fio's doubling up to iodepth.
    #[test]
    fn passing_windows_double_the_depth_to_its_ceiling_then_settle_and_end() {
        let mut c = ctl(99.0, 128);
        let mut depths = vec![c.qd];
        let mut t = 0;
        let step = loop {
            t += 10;
            c.completed(10, t).unwrap();
            match c.check(t) {
                Step::Go => depths.push(c.qd),
                s => break s,
            }
        };
        assert_eq!(depths, [1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(step, Step::Reset);
        assert!(c.holds(1) && !c.holds(0), "quiesces, then goes on");
        t += 10;
        c.completed(10, t).unwrap();
        assert_eq!(c.check(t), Step::Done);
    }

    /// Depths above 5 fail the percentile: the search doubles to 8,
    /// bisects down and settles between the last pass and the first
    /// failure, as fio's low/high bounds do.
    #[test]
    fn failing_windows_bisect_between_the_last_pass_and_the_first_failure() {
        let mut c = ctl(90.0, 64);
        let mut t = 0;
        let mut seen = vec![];
        for _ in 0..40 {
            t += 10;
            let late = c.qd > 5;
            for _ in 0..10 {
                c.completed(if late { 5000 } else { 10 }, t).unwrap();
            }
            seen.push(c.qd);
            if c.check(t) != Step::Go {
                break;
            }
        }
        assert_eq!(&seen[..4], [1, 2, 4, 8]);
        assert!(c.end_run && c.qd <= 5 && c.qd >= 4, "settled at {} after {seen:?}", c.qd);
    }

    /// Percentile 100: one late I/O ramps down at once; at depth 1 it ends the job.
    #[test]
    fn at_percentile_100_one_late_io_ramps_down_and_at_depth_1_fails() {
        let mut c = ctl(100.0, 16);
        c.qd = 8;
        c.completed(5000, 1).unwrap();
        assert_eq!(c.qd, 4);
        assert!(c.quiesce);
        c.qd = 1;
        let e = c.completed(5000, 2).unwrap_err();
        assert!(e.contains("max latency exceeded"), "{e}");
    }
}
