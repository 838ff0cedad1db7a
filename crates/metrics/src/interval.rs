//! The message a worker hands over once per interval, and the per-op stats it holds.

use crate::errors::ErrorTally;
use crate::hist::LatencyHistogram;
use serde::{Deserialize, Serialize};
use storbench_workload::OpKind;

/// Counts and latency of one operation kind over some span of time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpStats {
    pub ios: u64,
    pub bytes: u64,
    pub errors: ErrorTally,
    /// Completion latency; in fixed-rate runs, from the scheduled start.
    /// (Empty histograms are left out of the message: a report carries one
    /// set per operation kind, most of them unused, and each would cost the
    /// receiver a decompression.)
    #[serde(default, skip_serializing_if = "LatencyHistogram::is_empty", with = "crate::hist::wire")]
    pub latency: LatencyHistogram,
    /// Service time (issue to completion), kept apart only in fixed-rate runs.
    #[serde(with = "crate::hist::wire::option")]
    pub service: Option<LatencyHistogram>,
    /// Time to the first byte of a streamed response (HTTP GETs); empty for
    /// engines that cannot tell it apart.
    #[serde(default, skip_serializing_if = "LatencyHistogram::is_empty", with = "crate::hist::wire")]
    pub first_byte: LatencyHistogram,
    /// Resends after failures (engines that retry only when asked).
    #[serde(default)]
    pub retries: u64,
    /// Submission latency (fio's slat: from issue until the kernel took the
    /// operation), for engines that submit apart from waiting (libaio); the
    /// service time then counts from there (fio's clat). Empty otherwise.
    #[serde(default, skip_serializing_if = "LatencyHistogram::is_empty", with = "crate::hist::wire")]
    pub submit: LatencyHistogram,
}

impl OpStats {
    pub fn new(with_service: bool) -> OpStats {
        OpStats {
            ios: 0,
            bytes: 0,
            errors: ErrorTally::default(),
            latency: LatencyHistogram::new(),
            service: with_service.then(LatencyHistogram::new),
            first_byte: LatencyHistogram::new(),
            retries: 0,
            submit: LatencyHistogram::new(),
        }
    }

    /// One successful I/O. `service_ns` is ignored unless service is tracked.
    #[inline]
    pub fn record(&mut self, bytes: u64, latency_ns: u64, service_ns: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.latency.record(latency_ns);
        if let Some(s) = self.service.as_mut() {
            s.record(service_ns);
        }
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.errors.merge(&other.errors);
        self.latency.add(&other.latency);
        self.first_byte.add(&other.first_byte);
        self.submit.add(&other.submit);
        self.retries += other.retries;
        match (self.service.as_mut(), other.service.as_ref()) {
            (Some(a), Some(b)) => a.add(b),
            (None, Some(b)) => self.service = Some(b.clone()),
            _ => {}
        }
    }

    pub fn reset(&mut self) {
        self.ios = 0;
        self.bytes = 0;
        self.errors.reset();
        self.latency.reset();
        self.first_byte.reset();
        self.submit.reset();
        self.retries = 0;
        if let Some(s) = self.service.as_mut() {
            s.reset();
        }
    }
}

/// One worker's measurements over one interval: the agent->coordinator
/// message of the run protocol (its version is the protocol's, checked when an
/// agent and a coordinator first talk).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntervalReport {
    pub job: u32,
    pub worker: u32,
    /// Interval number since the job started (warm-up intervals included).
    pub seq: u64,
    /// Span covered, in ns since the job's start.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Inside the ramp (warm-up) time: kept out of the results.
    pub warmup: bool,
    /// How far behind its schedule a fixed-rate worker was at the end (ns).
    pub behind_ns: u64,
    /// Indexed by [`OpKind::index`].
    pub ops: Vec<OpStats>,
    /// The same operations again, kept apart per object size class: indexed
    /// by class - 1, then by [`OpKind::index`]. Empty without classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<Vec<OpStats>>,
    /// The same operations again per I/O priority the job uses (fio's
    /// cmdprio options): indexed by the job's priority index, then by
    /// [`OpKind::index`]. Empty unless I/Os carry priorities of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<Vec<OpStats>>,
    /// Windows of fio's averaged logs (`log_avg_msec`) that closed in this
    /// interval; empty unless the job asked for logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogSample>,
    /// Lines of fio's histogram log (`write_hist_log`) written in this interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hist_log: Vec<crate::plat::HistSample>,
    /// I/Os issued by the depth in flight once issued, in fio's
    /// `iodepth_level` buckets (see [`depth_level`]).
    #[serde(default, skip_serializing_if = "no_depths")]
    pub depths: [u64; 7],
}

fn no_depths(d: &[u64; 7]) -> bool {
    d.iter().all(|n| *n == 0)
}

/// fio's `io_u_mark_depth` bucket (1, 2, 4, 8, 16, 32, >=64) of I/Os issued
/// while `depth` are in flight, themselves included.
#[inline]
pub fn depth_level(depth: usize) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// One direction over one `log_avg_msec` window of one worker: what fio's
/// averaged bw, iops and latency logs are made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogSample {
    /// End of the window, ms since the measured phase began.
    pub t_ms: u64,
    /// 0 reads, 1 writes (fio's ddir).
    pub dir: u8,
    pub ios: u64,
    pub bytes: u64,
    /// Sum of the window's completion latencies.
    pub lat_sum_ns: u64,
    /// Window length in ms (shorter for the last, partial one).
    pub window_ms: u64,
}

impl IntervalReport {
    pub fn new(job: u32, worker: u32, with_service: bool) -> IntervalReport {
        IntervalReport {
            job,
            worker,
            seq: 0,
            start_ns: 0,
            end_ns: 0,
            warmup: false,
            behind_ns: 0,
            ops: Self::op_set(with_service),
            classes: Vec::new(),
            prios: Vec::new(),
            log: Vec::new(),
            hist_log: Vec::new(),
            depths: [0; 7],
        }
    }

    /// Keep `n` size classes apart as well (histograms allocate on first use).
    pub fn with_classes(mut self, n: usize) -> IntervalReport {
        let svc = self.ops[0].service.is_some();
        self.classes = (0..n).map(|_| Self::op_set(svc)).collect();
        self
    }

    /// Keep `n` I/O priorities apart as well.
    pub fn with_prios(mut self, n: usize) -> IntervalReport {
        let svc = self.ops[0].service.is_some();
        self.prios = (0..n).map(|_| Self::op_set(svc)).collect();
        self
    }

    /// Stats of `op` at the job's priority `index`, when priorities are kept.
    #[inline]
    pub fn prio_op(&mut self, index: u8, op: OpKind) -> Option<&mut OpStats> {
        self.prios.get_mut(index as usize).map(|c| &mut c[op.index()])
    }

    fn op_set(with_service: bool) -> Vec<OpStats> {
        OpKind::ALL.iter().map(|_| OpStats::new(with_service)).collect()
    }

    #[inline]
    pub fn op(&mut self, op: OpKind) -> &mut OpStats {
        &mut self.ops[op.index()]
    }

    /// Stats of `op` in size class `class` (1-based), when classes are kept.
    #[inline]
    pub fn class_op(&mut self, class: u8, op: OpKind) -> Option<&mut OpStats> {
        self.classes.get_mut((class as usize).wrapping_sub(1)).map(|c| &mut c[op.index()])
    }

    pub fn reset(&mut self) {
        for o in self.ops.iter_mut().chain(self.classes.iter_mut().flatten()).chain(self.prios.iter_mut().flatten()) {
            o.reset();
        }
        self.log.clear();
        self.hist_log.clear();
        self.depths = [0; 7];
        self.behind_ns = 0;
    }

    pub fn total_ios(&self) -> u64 {
        self.ops.iter().map(|o| o.ios).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_round_trips_through_json() {
        let mut r = IntervalReport::new(1, 2, true);
        r.op(OpKind::Read).record(4096, 100_000, 40_000);
        r.op(OpKind::Write).errors.record(crate::IoFailure::errno(5));
        let text = serde_json::to_string(&r).unwrap();
        let back: IntervalReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back.ops[0].ios, 1);
        assert_eq!(back.ops[0].service.as_ref().unwrap().count(), 1);
        assert_eq!(back.ops[1].errors.total(), 1);
    }

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = OpStats::new(false);
        let mut b = OpStats::new(false);
        a.record(4096, 10, 0);
        b.record(8192, 20, 0);
        a.merge(&b);
        assert_eq!((a.ios, a.bytes, a.latency.count()), (2, 12288, 2));
    }
}
