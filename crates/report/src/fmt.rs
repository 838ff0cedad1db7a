//! Number formatting shared by the human-readable renderers.

use storbench_metrics::LatencySummary;

/// `s` left-aligned in `width` characters. std's `{:<w$}` panics on widths
/// above 65,535 ("Formatting argument out of range"), and a column is as
/// wide as its longest cell: a job name, a prefix or a path may be longer.
pub fn pad_right(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(s.len() + width);
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(s.chars().count())));
    out
}

/// `s` right-aligned in `width` characters (see [`pad_right`]).
pub fn pad_left(s: &str, width: usize) -> String {
    let mut out: String = std::iter::repeat_n(' ', width.saturating_sub(s.chars().count())).collect();
    out.push_str(s);
    out
}

/// Each column's width in characters: its longest cell.
pub fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect()
}

/// The latency columns every human-readable view shows, in order.
pub const LATENCY_COLUMNS: [&str; 7] = ["min", "avg", "p50", "p90", "p99", "p99.9", "max"];

/// Values for [`LATENCY_COLUMNS`].
pub fn latency_cells(l: &LatencySummary) -> [String; 7] {
    [
        latency(l.min_ns),
        latency(l.mean_ns as u64),
        latency(l.at(50.0)),
        latency(l.at(90.0)),
        latency(l.at(99.0)),
        latency(l.at(99.9)),
        latency(l.max_ns),
    ]
}

/// Latency for people: 850ns, 85.2us, 1.23ms, 2.10s.
pub fn latency(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2}ms", v / 1e6)
    } else {
        format!("{:.2}s", v / 1e9)
    }
}

/// Rates for people: 950, 12.3k, 1.25M.
pub fn count(v: f64) -> String {
    if v < 10_000.0 {
        format!("{v:.0}")
    } else if v < 1e6 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{:.2}M", v / 1e6)
    }
}

/// Bytes per second as MiB/s with sensible precision.
pub fn mib_per_s(bytes_per_sec: f64) -> String {
    let m = bytes_per_sec / (1024.0 * 1024.0);
    if m < 10.0 {
        format!("{m:.2}")
    } else if m < 1000.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.0}")
    }
}

pub fn duration(secs: f64) -> String {
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        format!("{}m{:02}s", (secs / 60.0) as u64, (secs % 60.0) as u64)
    }
}

/// `2026-11-22 10:15:00 UTC`.
pub fn utc_time(secs: u64) -> String {
    let (y, m, d, hh, mm, ss) = storbench_workload::units::utc_fields(secs);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02} UTC")
}

/// A sweep point's figures as its table shows them: IOPS, MiB/s, mean,
/// p50, p99, p99.9, errors (the text table and the HTML report alike).
pub fn figure_cells(f: &storbench_model::sweep::PointFigures) -> [String; 7] {
    [
        count(f.iops),
        mib_per_s(f.bytes_per_sec),
        latency(f.mean_ns as u64),
        latency(f.p50_ns),
        latency(f.p99_ns),
        latency(f.p999_ns),
        f.errors.to_string(),
    ]
}

/// What an SLO probe ran at: its rate, its queue depth, or the closed loop.
pub fn probe_load(p: &storbench_model::slo::Probe) -> String {
    match (p.rate, p.iodepth) {
        (Some(r), _) => count(r),
        (None, Some(d)) => format!("iodepth {d}"),
        (None, None) => "closed loop".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_switch_at_the_right_magnitudes() {
        assert_eq!(latency(850), "850ns");
        assert_eq!(latency(85_200), "85.2us");
        assert_eq!(latency(1_234_000), "1.23ms");
        assert_eq!(latency(2_100_000_000), "2.10s");
        assert_eq!(count(950.0), "950");
        assert_eq!(count(12_345.0), "12.3k");
        assert_eq!(count(1_250_000.0), "1.25M");
        assert_eq!(duration(75.0), "1m15s");
    }
}
