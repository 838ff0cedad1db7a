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

/// How a window is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judge {
    /// fio's: the largest |sample - mean|.
    Deviation,
    /// fio's: |least-squares slope| per sample.
    Slope,
    /// SNIA PTS "data excursion": max - min of the window.
    Excursion,
    /// SNIA PTS "slope excursion": how far the best-fit line moves across
    /// the window, |slope| x (samples - 1).
    SlopeExcursion,
}

impl Judge {
    /// How the judge is written after the metric: `iops_slope`.
    pub fn suffix(self) -> &'static str {
        match self {
            Judge::Deviation => "",
            Judge::Slope => "_slope",
            Judge::Excursion => "_excursion",
            Judge::SlopeExcursion => "_slope_excursion",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub metric: Metric,
    pub judge: Judge,
    pub limit: f64,
    /// `limit` is a percentage of the window's mean.
    pub percent: bool,
}

impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = if self.percent { "%" } else { "" };
        write!(f, "{}{}:{}{pct}", self.metric.name(), self.judge.suffix(), self.limit)
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
    /// SNIA PTS mode: samples are rounds, the verdict names the round.
    #[serde(default)]
    pub snia: bool,
}

impl Default for SteadyState {
    fn default() -> Self {
        SteadyState { criteria: Vec::new(), dur: Duration::ZERO, ramp: Duration::ZERO, interval: Duration::from_secs(1), snia: false }
    }
}

/// SNIA PTS: a 5-round window, data excursion within 20% and slope
/// excursion within 10% of the window's average, at most 25 rounds.
pub const SNIA_WINDOW: u32 = 5;
pub const SNIA_MAX_ROUNDS: u32 = 25;

impl SteadyState {
    /// `snia` or `snia:ROUND` (a round's length, default 60 s; the tracking
    /// variable is IOPS).
    pub fn snia(round: Duration) -> SteadyState {
        SteadyState {
            criteria: vec![
                Criterion { metric: Metric::Iops, judge: Judge::Excursion, limit: 20.0, percent: true },
                Criterion { metric: Metric::Iops, judge: Judge::SlopeExcursion, limit: 10.0, percent: true },
            ],
            dur: round * SNIA_WINDOW,
            ramp: Duration::ZERO,
            interval: round,
            snia: true,
        }
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
        let judges = [Judge::SlopeExcursion, Judge::Excursion, Judge::Slope];
        let (metric, judge) =
            judges.iter().find_map(|j| what.strip_suffix(j.suffix()).map(|m| (m, *j))).unwrap_or((what, Judge::Deviation));
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
        // A limit no series can exceed judges nothing.
        if percent && limit > 100.0 {
            return Err(format!("'{w}': a limit in percent of the mean is at most 100%"));
        }
        if limit > 1e15 {
            return Err(format!("'{w}': the limit is more than any figure a run measures"));
        }
        out.push(Criterion { metric, judge, limit, percent });
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
    // fio's slope: x = 0, 1, ... n-1 (samples equally spaced).
    let slope = || {
        let (sx, sxx) = ((n - 1.0) * n / 2.0, (n - 1.0) * n * (2.0 * n - 1.0) / 6.0);
        let sxy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
        ((sxy - sx * mean) / (sxx - sx * sx / n)).abs()
    };
    let raw = match c.judge {
        Judge::Deviation => ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max),
        Judge::Slope => slope(),
        Judge::Excursion => ys.iter().copied().fold(f64::MIN, f64::max) - ys.iter().copied().fold(f64::MAX, f64::min),
        Judge::SlopeExcursion => slope() * (n - 1.0),
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
        assert_eq!(c[1], Criterion { metric: Metric::Bw, judge: Judge::Slope, limit: 1.0, percent: true });
        assert_eq!(c[3], Criterion { metric: Metric::Lat, judge: Judge::Deviation, limit: 500.0, percent: false });
        let snia = parse("iops_excursion:20%,iops_slope_excursion:10%").unwrap();
        assert_eq!((snia[0].judge, snia[1].judge), (Judge::Excursion, Judge::SlopeExcursion));
        assert_eq!(snia, SteadyState::snia(Duration::from_secs(60)).criteria);
        assert_eq!(c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","), "iops:10%,bw_slope:1%,p99:20%,lat:500");
        for bad in ["iops", "iops:x", "disk:1%", "iops:0%", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deviation_is_the_largest_distance_from_the_mean_as_fio_computes_it() {
        let w = samples(&[90.0, 100.0, 110.0, 100.0]);
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, judge: Judge::Deviation, limit: 10.0, percent: true }, &w);
        assert!((v - 10.0).abs() < 1e-9 && !ok, "10% is not below 10%: {v}");
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, judge: Judge::Deviation, limit: 11.0, percent: false }, &w);
        assert!((v - 10.0).abs() < 1e-9 && ok);
    }

    #[test]
    fn slope_is_the_least_squares_slope_over_the_sample_index() {
        // y = 100 + 2x: slope 2, mean 103 over x = 0..3.
        let w = samples(&[100.0, 102.0, 104.0, 106.0]);
        let (v, _) = judge(&Criterion { metric: Metric::Iops, judge: Judge::Slope, limit: 1.0, percent: false }, &w);
        assert!((v - 2.0).abs() < 1e-9, "{v}");
        let (v, ok) = judge(&Criterion { metric: Metric::Iops, judge: Judge::Slope, limit: 2.0, percent: true }, &w);
        assert!((v - 200.0 / 103.0).abs() < 1e-9 && ok, "{v}");
        // SNIA: the fit line moves 2 x 3 = 6 across the window; the data spans 6 too.
        let snia = |j| judge(&Criterion { metric: Metric::Iops, judge: j, limit: 10.0, percent: true }, &w);
        assert!((snia(Judge::SlopeExcursion).0 - 600.0 / 103.0).abs() < 1e-9);
        assert!((snia(Judge::Excursion).0 - 600.0 / 103.0).abs() < 1e-9);
        let falling = samples(&[106.0, 104.0, 102.0, 100.0]);
        assert!(
            (judge(&Criterion { metric: Metric::Iops, judge: Judge::Slope, limit: 1.0, percent: false }, &falling).0 - 2.0).abs() < 1e-9
        );
    }
}
