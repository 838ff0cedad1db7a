//! Parsing of sizes, durations, rates and percentages as fio users write them,
//! and the UTC calendar date of a Unix time (for names and signatures).
//!
//! Sizes follow fio's default (`kb_base=1024`): k, K, KiB and KB all mean 1024.
//! Durations take a default unit from the option (fio: seconds for runtime,
//! microseconds for thinktime).

use std::time::Duration;

/// A unit parse failure: the offending text and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitError {
    pub text: String,
    pub expected: &'static str,
}

impl std::fmt::Display for UnitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}' is not {}", self.text, self.expected)
    }
}

const SIZE_HELP: &str = "a size (e.g. 4k, 1m, 2g, 512, 1MiB)";

/// Parse a byte size: a number with an optional binary suffix k/m/g/t/p
/// (optionally followed by `i`, `b`/`B`, e.g. `4KiB`, `4kb`).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let err = || UnitError { text: text.to_string(), expected: SIZE_HELP };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(err());
    }
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => return Err(err()),
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| err())?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
            return Err(err());
        }
        return Ok(bytes.round() as u64);
    }
    let v: u64 = num.parse().map_err(|_| err())?;
    v.checked_mul(mult).ok_or_else(err)
}

/// Parse a duration; a bare number is in `default_unit` (fio: seconds for
/// runtime, microseconds for thinktime). Suffixes: ns, us, ms, s, m, h.
pub fn parse_duration(text: &str, default_unit: Duration) -> Result<Duration, UnitError> {
    let err = || UnitError { text: text.to_string(), expected: "a duration (e.g. 30, 30s, 500ms, 2m, 1h)" };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| err())?;
    if !v.is_finite() || v < 0.0 {
        return Err(err());
    }
    let unit = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit,
        "ns" => Duration::from_nanos(1),
        "us" | "usec" => Duration::from_micros(1),
        "ms" | "msec" => Duration::from_millis(1),
        "s" | "sec" => Duration::from_secs(1),
        "m" | "min" => Duration::from_secs(60),
        "h" | "hr" => Duration::from_secs(3600),
        _ => return Err(err()),
    };
    let secs = v * unit.as_secs_f64();
    if secs > 10.0 * 365.0 * 86400.0 {
        return Err(UnitError { text: text.to_string(), expected: "a duration of at most 10 years" });
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse a whole number (with optional k/m suffix meaning x1000, as in IOPS).
pub fn parse_count(text: &str) -> Result<u64, UnitError> {
    let err = || UnitError { text: text.to_string(), expected: "a whole number (e.g. 32, 10k)" };
    let t = text.trim();
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1000),
        Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000),
        _ => (t, 1),
    };
    let v: u64 = num.parse().map_err(|_| err())?;
    v.checked_mul(mult).ok_or_else(err)
}

/// Parse a percentage 0..=100 (a trailing `%` is allowed).
pub fn parse_percent(text: &str) -> Result<f64, UnitError> {
    let err = || UnitError { text: text.to_string(), expected: "a percentage from 0 to 100" };
    let v: f64 = text.trim().trim_end_matches('%').parse().map_err(|_| err())?;
    if !(0.0..=100.0).contains(&v) {
        return Err(err());
    }
    Ok(v)
}

/// Parse a boolean as fio does: 1/0, true/false, yes/no, on/off.
pub fn parse_bool(text: &str) -> Result<bool, UnitError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(UnitError { text: text.to_string(), expected: "a boolean (1/0, true/false)" }),
    }
}

/// Format bytes with a binary suffix for people (4096 -> "4KiB").
/// An amount of memory or space for people, rounded: "21.9 GiB".
pub fn format_amount(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 && (bytes >> (10 * (i + 1))) << (10 * (i + 1)) == bytes {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 && bytes >= 1024 {
        // not an exact multiple: fall back to one decimal
        let mut v = bytes as f64;
        let mut j = 0;
        while v >= 1024.0 && j < UNITS.len() - 1 {
            v /= 1024.0;
            j += 1;
        }
        return format!("{v:.1}{}", UNITS[j]);
    }
    format!("{}{}", v as u64, UNITS[i])
}

/// Year, month, day, hour, minute, second (UTC) of `secs` since the Unix
/// epoch, by Howard Hinnant's civil-from-days algorithm.
pub fn utc_fields(secs: u64) -> (i64, u64, u64, u64, u64, u64) {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u64;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u64;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 of a proleptic Gregorian date: the inverse of
/// [`utc_fields`]' day arithmetic (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468).max(0) as u64
}

/// Percent-decoding (`%20` -> space), as URIs and logs quote names; `None`
/// if an escape is malformed or the bytes are not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip() {
        for secs in [0u64, 86_399, 951_782_400, 1_549_411_238, 4_102_444_800] {
            let (y, m, d, ..) = utc_fields(secs);
            assert_eq!(days_from_civil(y, m, d), secs / 86_400, "{secs}");
        }
        assert_eq!(percent_decode("a%20b%2Fc"), Some("a b/c".into()));
        assert_eq!(percent_decode("bad%2"), None);
    }

    #[test]
    fn sizes_parse_like_fio() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert!(parse_size("4x").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("99999999999999p").is_err());
    }

    #[test]
    fn durations_default_unit_and_suffixes() {
        assert_eq!(parse_duration("30", Duration::from_secs(1)).unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms", Duration::from_secs(1)).unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("100", Duration::from_micros(1)).unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("2m", Duration::from_secs(1)).unwrap(), Duration::from_secs(120));
        assert!(parse_duration("-1", Duration::from_secs(1)).is_err());
        assert!(parse_duration("3 weeks", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn counts_percents_bools() {
        assert_eq!(parse_count("10k").unwrap(), 10_000);
        assert!(parse_count("1.5").is_err());
        assert_eq!(parse_percent("70%").unwrap(), 70.0);
        assert!(parse_percent("101").is_err());
        assert!(parse_bool("yes").unwrap());
        assert!(parse_bool("maybe").is_err());
    }

    #[test]
    fn format_size_is_exact_or_one_decimal() {
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(1 << 20), "1MiB");
        assert_eq!(format_size(8192), "8KiB");
        assert_eq!(format_size(1536), "1.5KiB");
        assert_eq!(format_size(100), "100B");
    }
}
