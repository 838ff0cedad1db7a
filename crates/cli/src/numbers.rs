//! Figures given as command flags (clap value parsers): finite and in the
//! range the flag means, else refused quoting the word as given (clap names
//! the flag). `nan`, `inf` and `1e308` all parse as numbers, and each once
//! went through: `slo --precision NaN` probed forever, `efficiency
//! --device-read-iops nan` printed "NaNM".

/// `v` (a trailing `%` allowed) if it is a finite number in `lo..=hi`
/// (above `lo` when `lo_open`), else "'v': give {what}".
fn within(v: &str, lo: f64, lo_open: bool, hi: f64, what: &str) -> Result<f64, String> {
    let n = v.trim().trim_end_matches('%').trim().parse::<f64>().ok().filter(|x| x.is_finite());
    match n {
        Some(x) if x <= hi && (x > lo || (!lo_open && x == lo)) => Ok(x),
        _ => Err(format!("'{v}': give {what}")),
    }
}

/// `replay --time-scale`.
pub fn time_scale(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1e6, "a number above 0 and at most 1000000 (2 = twice as fast)")
}

/// `run --preset --scale`: a share of the preset.
pub fn scale(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1.0, "a share above 0 and at most 1")
}

/// `study --scale`: a factor on a study's times and sizes.
pub fn study_scale(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1000.0, "a factor above 0 and at most 1000 (0.1 = a tenth of the times and sizes)")
}

/// A share: `80%` or `0.8`, above 0 and at most 1 (`run --fill`).
pub fn fraction(v: &str) -> Result<f64, String> {
    let pct = v.trim().ends_with('%');
    let f = within(v, 0.0, true, if pct { 100.0 } else { 1.0 }, "a share above 0 and at most 100% (such as 80% or 0.8)")?;
    Ok(if pct { f / 100.0 } else { f })
}

/// `run --rules --client-memory`: a size above 0 (1GiB, 512m).
pub fn memory(v: &str) -> Result<u64, String> {
    match storbench_workload::units::parse_size(v) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("'{v}': give a size above 0 (such as 1GiB or 512m)")),
    }
}

/// `sweep --knee-gain`.
pub fn knee_gain(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1000.0, "a percentage above 0 and at most 1000 (default 5)")
}

/// `slo --precision`: how narrow the pass/fail interval gets, in percent of the rate.
pub fn precision(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 100.0, "a percentage of the rate above 0 and at most 100 (default 2)")
}

/// `compare --min-effect` and `--fail-if-slower`: a share of the baseline's figure.
pub fn percent(v: &str) -> Result<f64, String> {
    within(v, 0.0, false, 100.0, "a percentage from 0 to 100 (e.g. 5 or 5%)")
}

/// `compare --fail-if-p99-worse`: latency may grow by more than 100%.
pub fn growth_percent(v: &str) -> Result<f64, String> {
    within(v, 0.0, false, 1e6, "a percentage from 0 to 1000000 (e.g. 5 or 5%)")
}

/// `efficiency --device-*-iops`: one device's IOPS.
pub fn device_iops(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1e9, "one device's IOPS, above 0 and at most 1000000000")
}

/// `efficiency --device-*-mibs`: one device's MiB/s.
pub fn device_mibs(v: &str) -> Result<f64, String> {
    within(v, 0.0, true, 1e7, "one device's MiB/s, above 0 and at most 10000000")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_negative_zero_and_absurd_figures_are_refused_by_their_word() {
        for v in ["nan", "NaN", "inf", "-inf", "infinity", "1e308", "-1", "0", "", "x"] {
            let e = precision(v).unwrap_err();
            assert!(e.starts_with(&format!("'{v}': give a percentage")), "{v}: {e}");
            assert!(device_iops(v).is_err() && time_scale(v).is_err() && knee_gain(v).is_err(), "{v}");
        }
        assert_eq!(precision("2").unwrap(), 2.0);
        assert_eq!(percent("0").unwrap(), 0.0, "a gate of 0% is a gate");
        assert_eq!(percent("5%").unwrap(), 5.0);
        assert!(percent("101").is_err() && growth_percent("101").is_ok());
        assert_eq!(fraction("80%").unwrap(), 0.8);
        assert_eq!(fraction("0.8").unwrap(), 0.8);
        assert!(fraction("80").is_err() && fraction("0%").is_err() && fraction("nan%").is_err());
        assert_eq!(device_mibs("3500").unwrap(), 3500.0);
    }
}
