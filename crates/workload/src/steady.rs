//! Steady state, as fio judges it (`steadystate`/`ss`, `ss_dur`, `ss_ramp`,
//! `ss_interval`), with several criteria at once and latency ones besides.
//!
//! After `ramp` of measured time, the job's figures are sampled every
//! `interval` into a rolling window `dur` long. Once the window is full, each
//! criterion is judged on it as fio does: a *deviation* criterion (`iops:10%`)
//! holds when every sample is within the limit of the window's mean (the
//! largest |x - mean|, as a percentage of the mean with `%`); a *slope*
//! criterion (`iops_slope:1%`) when the least-squares slope of the samples
//! over their index (equally spaced, as fio assumes) is below the limit (as a
//! percentage of the mean with `%`). Steady state is attained when every
//! criterion holds on the same window; the job then ends, as in fio.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a criterion looks at, per sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    /// Bytes per second.
    Bw,
    /// Mean completion latency (fio's `lat`).
    Lat,
    /// 99th percentile of completion latency (storbench's).
    P99,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bw => "bw",
            Metric::Lat => "lat",
            Metric::P99 => "p99",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub metric: Metric,
    /// Least-squares slope rather than largest deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// `limit` is a percentage of the window's mean.
    pub percent: bool,
}

impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slope = if self.slope { "_slope" } else { "" };
        let pct = if self.percent { "%" } else { "" };
        write!(f, "{}{slope}:{}{pct}", self.metric.name(), self.limit)
    }
}

/// A job's steady-state settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    pub criteria: Vec<Criterion>,
    /// The rolling window (fio `ss_dur`); zero: steady state is not judged.
    pub dur: Duration,
    /// Measured time before sampling begins (fio `ss_ramp`).
    pub ramp: Duration,
    /// Sampling period (fio `ss_interval`, whole seconds).
    pub interval: Duration,
}

impl Default for SteadyState {
    fn default() -> Self {
        SteadyState { criteria: Vec::new(), dur: Duration::ZERO, ramp: Duration::ZERO, interval: Duration::from_secs(1) }
    }
}

impl SteadyState {
    /// Judged at all: a window and at least one criterion.
    pub fn enabled(&self) -> bool {
        !self.dur.is_zero() && !self.criteria.is_empty()
    }

    /// Samples in the window.
    pub fn samples(&self) -> usize {
        (self.dur.as_secs() / self.interval.as_secs().max(1)).max(2) as usize
    }

    pub fn describe(&self) -> String {
        self.criteria.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
    }
}

/// `iops:10%,bw_slope:1%` (fio's `steadystate`; fio takes one criterion,
/// storbench several, all of which must hold).
pub fn parse(v: &str) -> Result<Vec<Criterion>, String> {
    let bad = |w: &str| {
        format!(
            "'{w}' is not a steady-state criterion: give METRIC:LIMIT or METRIC_slope:LIMIT, METRIC one of iops, bw, lat, p99, \
             LIMIT a number or a percentage of the mean (e.g. iops:10%, bw_slope:1%)"
        )
    };
    let mut out = Vec::new();
    for w in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let (what, limit) = w.split_once(':').ok_or_else(|| bad(w))?;
        let (metric, slope) = match what.strip_suffix("_slope") {
            Some(m) => (m, true),
            None => (what, false),
        };
        let metric = match metric {
            "iops" => Metric::Iops,
            "bw" => Metric::Bw,
            "lat" => Metric::Lat,
            "p99" => Metric::P99,
            _ => return Err(bad(w)),
        };
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let limit: f64 = number.trim().parse().map_err(|_| bad(w))?;
        if !(limit.is_finite() && limit > 0.0) {
            return Err(format!("'{w}': the limit must be above 0"));
        }
        out.push(Criterion { metric, slope, limit, percent });
    }
    if out.is_empty() {
        return Err(bad(v));
    }
    Ok(out)
}

/// One sample of the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// End of the sample, seconds since the measured phase began.
    pub t: f64,
    pub iops: f64,
    pub bw: f64,
    pub lat_ns: f64,
    pub p99_ns: f64,
}

impl Sample {
    fn get(&self, m: Metric) -> f64 {
        match m {
            Metric::Iops => self.iops,
            Metric::Bw => self.bw,
            Metric::Lat => self.lat_ns,
            Metric::P99 => self.p99_ns,
        }
    }
}

/// A criterion's value on a window (deviation or |slope|, a percentage of
/// the mean when the criterion is one), and whether it holds.
pub fn judge(c: &Criterion, window: &[Sample]) -> (f64, bool) {
    let ys: Vec<f64> = window.iter().map(|s| s.get(c.metric)).collect();
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    let raw = if c.slope {
        // fio's: x = 0, 1, ... n-1 (samples equally spaced).
        let (sx, sxx) = ((n - 1.0) * n / 2.0, (n - 1.0) * n * (2.0 * n - 1.0) / 6.0);
        let sxy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
        let sy = mean * n;
        ((sxy - sx * sy / n) / (sxx - sx * sx / n)).abs()
    } else {
        ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
    };
    let value = if c.percent {
        if mean > 0.0 {
            100.0 * raw / mean
        } else {
            f64::INFINITY
        }
    } else {
        raw
    };
    (value, value < c.limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(iops: &[f64]) -> Vec<Sample> {
        iops.iter().enumerate().map(|(i, v)| Sample { t: i as f64 + 1.0, iops: *v, bw: v * 4096.0, ..Sample::default() }).collect()
    }

    #[test]
    fn criteria_parse_as_fio_writes_them_and_several_at_once() {
        let c = parse("iops:10%,bw_slope:1%,p99:20%,lat:500").unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(c[1], Criterion { metric: Metric::Bw, slope: true, limit: 1.0, percent: true });
        assert_eq!(c[3], Criterion { metric: Metric::Lat, slope: false, limit: 500.0, percent: false });
        assert_eq!(c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","), "iops:10%,bw_slope:1%,p99:20%,lat:500");
        for bad in ["iops", "iops:x", "disk:1%", "iops:0%", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deviation_is_the_largest_distance_from_the_mean_as_fio_computes_it() {
        let w = samples(&[90.0, 100.0, 110.0, 100.0]);
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, slope: false, limit: 10.0, percent: true }, &w);
        assert!((v - 10.0).abs() < 1e-9 && !ok, "10% is not below 10%: {v}");
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, slope: false, limit: 11.0, percent: false }, &w);
        assert!((v - 10.0).abs() < 1e-9 && ok);
    }

    #[test]
    fn slope_is_the_least_squares_slope_over_the_sample_index() {
        // y = 100 + 2x: slope 2, mean 103 over x = 0..3.
        let w = samples(&[100.0, 102.0, 104.0, 106.0]);
        let (v, _) = judge(&Criterion { metric: Metric::Iops, slope: true, limit: 1.0, percent: false }, &w);
        assert!((v - 2.0).abs() < 1e-9, "{v}");
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, slope: true, limit: 2.0, percent: true }, &w);
        assert!((v - 200.0 / 103.0).abs() < 1e-9 && ok, "{v}");
        let falling = samples(&[106.0, 104.0, 102.0, 100.0]);
        assert!((judge(&Criterion { metric: Metric::Iops, slope: true, limit: 1.0, percent: false }, &falling).0 - 2.0).abs() < 1e-9);
    }
}
