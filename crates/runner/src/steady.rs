//! Steady state judged on a job's merged per-second points, as they
//! complete (`storbench_workload::steady` has the arithmetic): the
//! coordinator ends the job (`StopJob`) the second every criterion holds.

use std::collections::VecDeque;
use storbench_model::{SeriesPoint, SteadyStateResult, SteadyValue};
use storbench_workload::steady::{judge, Sample, SteadyState};

pub struct Tracker {
    spec: SteadyState,
    /// The job's warm-up (ramp_time), in seconds since the group started.
    ramp_s: f64,
    /// Seconds of the sample being gathered: (seconds, ios-weighted sums).
    gathering: Vec<(f64, Sample)>,
    window: VecDeque<Sample>,
    /// The criteria's values on the last full window.
    judged: Vec<SteadyValue>,
    attained_at: Option<f64>,
    /// Attained, and the job not yet told to stop.
    pub newly_attained: bool,
}

impl Tracker {
    pub fn new(spec: &SteadyState, ramp_ns: u64) -> Option<Tracker> {
        spec.enabled().then(|| Tracker {
            spec: spec.clone(),
            ramp_s: ramp_ns as f64 / 1e9,
            gathering: Vec::new(),
            window: VecDeque::new(),
            judged: Vec::new(),
            attained_at: None,
            newly_attained: false,
        })
    }

    /// A completed point of the job's series.
    pub fn point(&mut self, p: &SeriesPoint) {
        let measured = p.t - self.ramp_s;
        // Warm-up, ss_ramp, and a last partial second (its rates are noise) do not count.
        if p.warmup || self.attained_at.is_some() || measured <= self.spec.ramp.as_secs_f64() + 1e-9 || p.duration < 0.5 {
            return;
        }
        self.gathering.push((p.duration, sample(p, measured)));
        if self.gathering.len() < self.spec.interval.as_secs().max(1) as usize {
            return;
        }
        let s = combine(&std::mem::take(&mut self.gathering));
        self.window.push_back(s);
        if self.window.len() > self.spec.samples() {
            self.window.pop_front();
        }
        if self.window.len() == self.spec.samples() {
            self.judge(s.t);
        }
    }

    fn judge(&mut self, t: f64) {
        let window: Vec<Sample> = self.window.iter().copied().collect();
        self.judged = self
            .spec
            .criteria
            .iter()
            .map(|c| {
                let (value, holds) = judge(c, &window);
                SteadyValue { criterion: c.to_string(), value, holds }
            })
            .collect();
        if self.judged.iter().all(|v| v.holds) {
            self.attained_at = Some(t);
            self.newly_attained = true;
        }
    }

    /// The verdict, for the job's result.
    pub fn result(&self) -> SteadyStateResult {
        SteadyStateResult {
            criteria: self.spec.describe(),
            dur_s: self.spec.dur.as_secs_f64(),
            ramp_s: self.spec.ramp.as_secs_f64(),
            interval_s: self.spec.interval.as_secs_f64(),
            snia: self.spec.snia,
            attained: self.attained_at.is_some(),
            at_s: self.attained_at,
            judged: self.judged.clone(),
            window: self.window.iter().copied().collect(),
        }
    }
}

/// One second of the job: every operation together (fio sums its
/// directions), latency weighted by operations, p99 the worst operation's.
fn sample(p: &SeriesPoint, t: f64) -> Sample {
    let iops: f64 = p.ops.iter().map(|o| o.iops).sum();
    let lat = if iops > 0.0 { p.ops.iter().map(|o| o.mean_ns as f64 * o.iops).sum::<f64>() / iops } else { 0.0 };
    Sample {
        t,
        iops,
        bw: p.ops.iter().map(|o| o.bytes_per_sec).sum(),
        lat_ns: lat,
        p99_ns: p.ops.iter().map(|o| o.p99_ns as f64).fold(0.0, f64::max),
    }
}

/// Seconds into one sample of `ss_interval`: rates weighted by time, latency
/// by operations, p99 the worst second's (percentiles do not average).
fn combine(parts: &[(f64, Sample)]) -> Sample {
    let secs: f64 = parts.iter().map(|(d, _)| d).sum();
    let ios: f64 = parts.iter().map(|(d, s)| d * s.iops).sum();
    Sample {
        t: parts.last().map_or(0.0, |(_, s)| s.t),
        iops: ios / secs,
        bw: parts.iter().map(|(d, s)| d * s.bw).sum::<f64>() / secs,
        lat_ns: if ios > 0.0 { parts.iter().map(|(d, s)| d * s.iops * s.lat_ns).sum::<f64>() / ios } else { 0.0 },
        p99_ns: parts.iter().map(|(_, s)| s.p99_ns).fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::SeriesOp;
    use storbench_workload::steady::parse;
    use storbench_workload::OpKind;

    fn point(t: f64, iops: f64) -> SeriesPoint {
        let op = SeriesOp {
            op: OpKind::Read,
            iops,
            bytes_per_sec: iops * 4096.0,
            errors: 0,
            error_kinds: Default::default(),
            mean_ns: 1000,
            p50_ns: 900,
            p99_ns: 2000,
            max_ns: 3000,
            buckets: vec![],
        };
        SeriesPoint { t, duration: 1.0, warmup: false, ops: vec![op] }
    }

    fn spec(criteria: &str, dur: u64, ramp: u64, interval: u64) -> SteadyState {
        SteadyState {
            criteria: parse(criteria).unwrap(),
            dur: std::time::Duration::from_secs(dur),
            ramp: std::time::Duration::from_secs(ramp),
            interval: std::time::Duration::from_secs(interval),
            snia: false,
        }
    }

    #[test]
    fn attained_the_second_the_window_holds_after_the_ramps() {
        // ramp_time 2 s, ss_ramp 1 s, a 3 s window: rates settle at second 6.
        let mut t = Tracker::new(&spec("iops:5%", 3, 1, 1), 2_000_000_000).unwrap();
        let rates = [500.0, 800.0, 1000.0, 1300.0, 1100.0, 1000.0, 1010.0, 1005.0, 1000.0];
        let mut at = None;
        for (i, r) in rates.iter().enumerate() {
            t.point(&point(2.0 + i as f64 + 1.0, *r));
            if t.newly_attained && at.is_none() {
                at = Some(i + 1);
            }
        }
        // Measured seconds 1..9; the window of seconds 6, 7, 8 (1000, 1010, 1005) is the first within 5%.
        assert_eq!(at, Some(8));
        let r = t.result();
        assert!(r.attained && r.at_s == Some(8.0) && r.window.len() == 3, "{r:?}");
    }

    #[test]
    fn not_attained_keeps_the_last_window_and_values_and_intervals_combine_seconds() {
        let mut t = Tracker::new(&spec("iops_slope:0.1%,p99:1%", 4, 0, 2), 0).unwrap();
        for i in 0..12 {
            t.point(&point(i as f64 + 1.0, 1000.0 + 50.0 * i as f64));
        }
        let r = t.result();
        assert!(!r.attained && r.at_s.is_none());
        assert_eq!(r.window.len(), 2, "4 s of 2 s samples");
        assert_eq!(r.window[1].iops, 1525.0, "seconds 11 and 12 combined: (1500 + 1550) / 2");
        assert!(!r.judged[0].holds && r.judged[1].holds, "{:?}", r.judged);
    }
}
