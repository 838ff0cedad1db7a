//! The results directory: everything a run produced, in one place.

use crate::args::OutputFormat;
use crate::error::CliError;
use std::path::{Path, PathBuf};
use storbench_report::{csv, fio_json, json, text};
use storbench_runner::RunResult;

/// `storbench-results/<UTC date>-<time>` under the current directory, made unique.
pub fn default_dir() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = PathBuf::from("storbench-results").join(utc_stamp(secs));
    let mut dir = base.clone();
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = PathBuf::from(format!("{}-{n}", base.display()));
    }
    dir
}

/// yyyymmdd-HHMMSS in UTC, from Unix seconds (civil-from-days).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Fail early (before any target is touched) if the directory cannot be made.
pub fn check_writable(dir: &Path) -> Result<(), CliError> {
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::usage(format!("results directory {} exists and is not a directory", dir.display())));
    }
    let mut ancestor = dir;
    while !ancestor.exists() {
        ancestor = match ancestor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    let c = std::ffi::CString::new(ancestor.as_os_str().as_encoded_bytes()).map_err(|_| CliError::usage("results directory has a NUL byte"))?;
    // SAFETY: access only reads the C string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(CliError::usage(format!("cannot write results under {}: permission denied", ancestor.display())));
    }
    Ok(())
}

pub fn create(dir: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::system(format!("cannot create results directory {}: {e}", dir.display())))
}

/// Write every format into the directory.
pub fn write_all(dir: &Path, r: &RunResult, notes: &[String]) -> Result<(), CliError> {
    let mut summary = text::render(r);
    for n in notes {
        summary.push_str(&format!("note: {n}\n"));
    }
    let files = [
        ("summary.txt", summary),
        ("result.json", json::render(r)),
        ("fio.json", fio_json::render(r)),
        ("series.csv", csv::render(r)),
    ];
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::write(&path, content).map_err(|e| CliError::system(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// What goes to standard output for the chosen format.
pub fn stdout_text(format: OutputFormat, r: &RunResult) -> String {
    match format {
        OutputFormat::Normal => text::render(r),
        OutputFormat::Json => json::render(r),
        OutputFormat::FioJson => fio_json::render(r),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_stamp_matches_known_dates() {
        assert_eq!(super::utc_stamp(0), "19700101-000000");
        assert_eq!(super::utc_stamp(1_700_000_000), "20231114-221320");
        assert_eq!(super::utc_stamp(951_782_400), "20000229-000000");
    }
}
