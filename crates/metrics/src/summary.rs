//! Latency summaries computed from histograms (never averaged across sources).

use crate::hist::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// The percentiles fio prints, which storbench reports too.
pub const STANDARD_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// min/mean/max/stdev and percentiles of one histogram, in ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    /// (percentile, value in ns), in [`STANDARD_PERCENTILES`] order.
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencySummary {
    pub fn of(h: &LatencyHistogram) -> LatencySummary {
        LatencySummary {
            count: h.count(),
            min_ns: h.min(),
            mean_ns: if h.count() == 0 { 0.0 } else { h.mean() },
            stdev_ns: if h.count() == 0 { 0.0 } else { h.stdev() },
            max_ns: h.max(),
            percentiles: STANDARD_PERCENTILES.iter().map(|p| (*p, h.percentile(*p))).collect(),
        }
    }

    pub fn at(&self, p: f64) -> u64 {
        self.percentiles.iter().find(|e| e.0 == p).map(|e| e.1).unwrap_or(0)
    }
}
