//! An option as a sweep's axis: the order its values take (by their
//! meaning, not their spelling: 512 < 4k < 32k < 256k), how a chart or
//! table writes them (block sizes in B/KiB/MiB, not raw bytes), and whether
//! stepping along it offers the store more load (where a knee is sought).

use super::Kind;
use crate::units::{format_size, parse_count, parse_duration, parse_percent, parse_size};
use std::time::Duration;

/// The options whose values are how much load a job offers: concurrency
/// (queue depth, workers, volumes or images, fleet agents, connections) or
/// a rate. Along these a step that gains nothing while latency grows is a
/// knee; along a block size, a read mix or a file size it is only another
/// workload, so no knee is sought there.
const LOAD: &[&str] = &["iodepth", "numjobs", "rate", "rate_iops", "images", "volumes", "agents", "threads", "connections", "users"];

/// Whether sweeping `option` (canonical) steps the offered load. Only
/// counts and rates do: the option table's kind of the option must be one.
pub fn loads_the_store(option: &str, kind: Kind) -> bool {
    LOAD.contains(&option) && matches!(kind, Kind::Count | Kind::Number | Kind::Text)
}

/// A value's magnitude by the kind of its option (sizes in bytes, counts
/// with k/m, durations in seconds, percentages); none for words.
pub fn magnitude(kind: Kind, value: &str) -> Option<f64> {
    match kind {
        Kind::Size => parse_size(value).ok().map(|v| v as f64),
        Kind::Count | Kind::Number | Kind::Flag => {
            parse_count(value).ok().map(|v| v as f64).or_else(|| value.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        }
        Kind::Duration => parse_duration(value, Duration::from_secs(1)).ok().map(|d| d.as_secs_f64()),
        Kind::Percent => parse_percent(value).ok(),
        Kind::Text | Kind::Choice(_) => None,
    }
}

/// Values in the order of their magnitude when every one has one (ties
/// keep their given order); words as given.
pub fn sort_values(kind: Kind, values: &mut [String]) {
    if values.iter().all(|v| magnitude(kind, v).is_some()) {
        values.sort_by(|a, b| magnitude(kind, a).unwrap_or(0.0).total_cmp(&magnitude(kind, b).unwrap_or(0.0)));
    }
}

/// How a chart's tick or a table's cell writes a value of `option`: a size
/// with its binary unit (`262144` -> `256KiB`), anything else as given.
pub fn label(option: &str, value: &str) -> String {
    match super::core(option).map(|o| o.info.kind) {
        Some(Kind::Size) => parse_size(value).map(format_size).unwrap_or_else(|_| value.to_string()),
        _ => value.to_string(),
    }
}

/// Whether `option` sets the size of each I/O (so IOPS alone hides the
/// throughput change along it, and MiB/s is charted beside).
pub fn sets_block_size(option: &str) -> bool {
    matches!(option, "bs" | "bssplit" | "object_size")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_order_by_bytes_and_read_with_units() {
        let mut v: Vec<String> = ["262144", "32k", "4096", "512"].map(String::from).into();
        sort_values(Kind::Size, &mut v);
        assert_eq!(v, ["512", "4096", "32k", "262144"]);
        assert_eq!(
            (label("bs", "262144"), label("bs", "512"), label("bs", "1m"), label("iodepth", "16")),
            ("256KiB".into(), "512B".into(), "1MiB".into(), "16".into())
        );
        let mut w: Vec<String> = ["randread", "read"].map(String::from).into();
        sort_values(Kind::Choice(&[]), &mut w);
        assert_eq!(w, ["randread", "read"], "words keep the order given");
        let mut d: Vec<String> = ["1m", "30s", "500ms"].map(String::from).into();
        sort_values(Kind::Duration, &mut d);
        assert_eq!(d, ["500ms", "30s", "1m"]);
    }

    #[test]
    fn only_concurrency_and_rates_load_the_store() {
        assert!(
            loads_the_store("iodepth", Kind::Count) && loads_the_store("rate_iops", Kind::Number) && loads_the_store("images", Kind::Count)
        );
        assert!(
            !loads_the_store("bs", Kind::Size) && !loads_the_store("rwmixread", Kind::Percent) && !loads_the_store("fsync", Kind::Count)
        );
    }
}
