//! fio's logs, fed from the measured loop: the averaged windows
//! (`log_avg_msec`), a line per I/O (`log_avg_msec=0`) and the histogram
//! windows (`log_hist_msec`). Reads and writes that succeeded, measured phase only.

use super::outcome::Outcome;
use super::Worker;
use storbench_metrics::LogSample;
use storbench_workload::OpKind;

impl Worker {
    /// Add a completion to the current window of fio's logs, first closing
    /// the windows that ended before it (measured phase only, reads and
    /// writes that succeeded, as fio logs them).
    pub(super) fn log_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (ramp, window) = (self.k.ramp_ns, self.k.log_window_ns);
        if now < ramp {
            return;
        }
        if self.log.end == 0 {
            self.log.end = ramp + window;
        }
        while now >= self.log.end {
            self.log.close(&mut self.report.log, (self.log.end - ramp) / 1_000_000, window / 1_000_000);
            self.log.end += window;
        }
        if let Ok(bytes) = outcome.result {
            let acc = &mut self.log.acc[dir];
            acc.ios += 1;
            acc.bytes += bytes;
            acc.lat_sum_ns += outcome.latency;
        }
    }

    /// A line for each per-I/O log (measured phase, reads and writes that
    /// succeeded, as fio logs them).
    pub(super) fn unit_log_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64, offset: u64, ioprio: u16) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (Ok(bytes), true, Some(log)) = (outcome.result, now >= self.k.ramp_ns, self.unit_log.as_mut()) else {
            return;
        };
        let t_ms = (now - self.k.ramp_ns) / 1_000_000;
        log.completed(&crate::unit_log::Sample {
            t_ms,
            dir,
            bytes,
            lat_ns: outcome.latency,
            clat_ns: outcome.clat,
            slat_ns: outcome.submit,
            offset,
            ioprio,
        });
    }

    /// Count a completion in fio's histogram log (measured phase, reads and
    /// writes that succeeded), writing a line when its direction's window
    /// has passed.
    pub(super) fn hist_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (Ok(bytes), true) = (outcome.result, now >= self.k.ramp_ns) else {
            return;
        };
        let t_ms = (now - self.k.ramp_ns) / 1_000_000;
        let windows = self.hist.get_or_insert_with(Default::default);
        if let Some(line) = windows[dir].record(outcome.clat, t_ms, self.k.hist_window_ms, dir as u8, bytes) {
            self.report.hist_log.push(line);
        }
    }
}

/// The open window of fio's averaged logs, per direction.
#[derive(Default)]
pub(super) struct LogWindow {
    /// When the window ends (ns since the job's start); 0 before the first.
    pub(super) end: u64,
    pub(super) acc: [LogSample; 2],
}

impl LogWindow {
    /// Hand over each direction that saw I/O in the window, and start afresh.
    pub(super) fn close(&mut self, out: &mut Vec<LogSample>, t_ms: u64, window_ms: u64) {
        for (dir, acc) in self.acc.iter_mut().enumerate() {
            if acc.ios > 0 {
                out.push(LogSample { t_ms, dir: dir as u8, window_ms, ..*acc });
            }
            *acc = LogSample::default();
        }
    }
}
