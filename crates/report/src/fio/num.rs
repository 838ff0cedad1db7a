//! fio's number and time formatting: `num2str` (lib/num2str.c) and `ctime`.

/// What `num2str` appends after the prefix (fio's `enum n2s_unit`).
#[derive(Clone, Copy)]
pub enum Unit {
    None,
    Byte,
    BytePerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
        }
    }
}

/// fio's `num2str(num, maxlen, 1, pow2, unit)`: at most `maxlen` digits,
/// divided by 1000 (or 1024) as needed, with fio's own rounding ("92.8MiB/s",
/// "23.7k", "4050.2k", "186MiB").
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let (mut num, mut post, mut modulo, mut carry) = (num, 0, None, false);
    while post < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let tail = format!("{}{}", prefixes[post], unit.suffix());
    let Some(m) = modulo else {
        return format!("{num}{tail}");
    };
    if maxlen as i64 - digits(num) as i64 <= 1 {
        return format!("{}{tail}", num + carry as u64);
    }
    let decimals = maxlen - digits(num) - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{tail}", &frac[2..])
}

fn digits(n: u64) -> usize {
    n.to_string().len()
}

/// C's `ctime()` without the newline, in UTC: "Sun Nov 22 17:20:38 2026".
pub fn ctime(unix_secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        y
    )
}

/// Year, month (1-12) and day of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fios_normal_output() {
        // From a real fio 3.33 run: IOPS=23.7k, BW=92.8MiB/s (97.3MB/s)(186MiB/2001msec).
        assert_eq!(num2str(23748, 4, false, Unit::None), "23.7k");
        assert_eq!(num2str(97_272_323, 4, true, Unit::BytePerSec), "92.8MiB/s");
        assert_eq!(num2str(97_272_323, 4, false, Unit::BytePerSec), "97.3MB/s");
        assert_eq!(num2str(194_641_920, 4, true, Unit::Byte), "186MiB");
        assert_eq!(num2str(194_641_920, 4, false, Unit::Byte), "195MB");
        // display_lat's min/max: "max=4050.2k"; small values stay as they are.
        assert_eq!(num2str(4_050_240, 6, false, Unit::None), "4050.2k");
        assert_eq!(num2str(460, 6, false, Unit::None), "460");
        // The job header's block sizes: 4096B, 64.0KiB, 1024KiB.
        assert_eq!(num2str(4096, 4, true, Unit::Byte), "4096B");
        assert_eq!(num2str(65536, 4, true, Unit::Byte), "64.0KiB");
        assert_eq!(num2str(1 << 20, 4, true, Unit::Byte), "1024KiB");
        // A fraction that rounds up to the next whole number.
        assert_eq!(num2str(1999, 3, false, Unit::None), "2.0k");
    }

    #[test]
    fn ctime_is_cs_layout() {
        // The notes' run: timestamp 1795368038 printed as "Sun Nov 22 17:20:38 2026" (TZ=UTC).
        assert_eq!(ctime(1_795_368_038), "Sun Nov 22 17:20:38 2026");
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }
}
