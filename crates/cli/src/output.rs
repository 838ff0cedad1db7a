//! The results directory: everything a run produced, in one place, one file
//! per format that has a file name (see `storbench_report::EXPORTERS`).

use crate::error::CliError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use storbench_model::{RunResult, RunSet};
use storbench_report::{Exporter, EXPORTERS};

/// `storbench-results/<UTC date>-<time>` under the current directory, made unique.
pub fn default_dir() -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let base = PathBuf::from("storbench-results").join(utc_stamp(secs));
    let mut dir = base.clone();
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = PathBuf::from(format!("{}-{n}", base.display()));
    }
    dir
}

/// yyyymmdd-HHMMSS in UTC, from Unix seconds.
pub fn utc_stamp(secs: u64) -> String {
    let (y, m, d, hh, mm, ss) = storbench_workload::units::utc_fields(secs);
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}")
}

/// Every file a run writes into its results directory (its journal first:
/// a run killed early leaves only that, and it must not be overwritten).
pub fn run_files() -> impl Iterator<Item = &'static str> {
    [storbench_model::journal::FILE, "series.csv"].into_iter().chain(EXPORTERS.iter().filter_map(|e| e.file_name()))
}

/// Fail early (before any target is touched) if the directory cannot be
/// made, is a symbolic link (results are never written through one), or
/// holds an earlier run's results that `replace` (`--force`) does not allow
/// to be replaced.
pub fn check_writable(dir: &Path, replace: bool) -> Result<(), CliError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CliError::usage(format!(
            "results directory {} is a symbolic link; storbench does not write results through links: give the directory it points to",
            dir.display()
        )));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::usage(format!("results directory {} exists and is not a directory", dir.display())));
    }
    if let (false, Some(f)) = (replace, run_files().find(|f| std::fs::symlink_metadata(dir.join(f)).is_ok())) {
        return Err(CliError::usage(format!(
            "results directory {} holds an earlier run's results ({f}); give another --results-dir, or pass --force to replace them",
            dir.display()
        )));
    }
    let mut ancestor = dir;
    while !ancestor.exists() {
        ancestor = match ancestor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    let c =
        std::ffi::CString::new(ancestor.as_os_str().as_encoded_bytes()).map_err(|_| CliError::usage("results directory has a NUL byte"))?;
    // SAFETY: access only reads the C string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(CliError::usage(format!("cannot write results under {}: permission denied", ancestor.display())));
    }
    Ok(())
}

/// A new file in a results directory, never through a link or over a file
/// that is there (`O_EXCL`: a link planted in the directory is not
/// followed). A file being replaced (`--force`) is removed first.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    File::options().write(true).create_new(true).open(path)
}

/// Create the results directory; the first of its ancestors that did not
/// exist (what a failed run should remove again), if any.
pub fn create(dir: &Path) -> Result<Option<PathBuf>, CliError> {
    let mut first_new = None;
    let mut d = dir;
    while !d.as_os_str().is_empty() && !d.exists() {
        first_new = Some(d.to_path_buf());
        d = d.parent().unwrap_or(Path::new(""));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        let message = format!("cannot create results directory {}: {e}", dir.display());
        // A path that cannot be (a missing or read-only place) is the user's to fix.
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                CliError::usage(message)
            }
            _ => CliError::system(message),
        }
    })?;
    Ok(first_new)
}

/// Undo [`create`] after a run that measured nothing: remove the
/// directories it made, if they are still empty.
pub fn remove_if_empty(dir: &Path, made: Option<PathBuf>) {
    let Some(top) = made else { return };
    let mut d = dir;
    loop {
        if std::fs::remove_dir(d).is_err() || d == top {
            break;
        }
        match d.parent() {
            Some(p) => d = p,
            None => break,
        }
    }
}

/// Write every format that has a file into the directory, each streamed.
///
/// A failure names the files that were written and says the summary went to
/// standard output.
pub fn write_all(dir: &Path, r: &RunResult) -> Result<(), CliError> {
    let runs = RunSet::one(r.clone());
    let mut written = Vec::new();
    for e in EXPORTERS {
        if let Some(name) = e.file_name() {
            write_file(dir, name, |w| e.write(&runs, w)).map_err(|err| {
                let kept = if written.is_empty() { "none of the result files".to_string() } else { written.join(", ") };
                CliError::system(format!(
                    "{}; it holds {kept} whole (and series.csv as far as it was written as the run went); \
                     the summary was printed above",
                    err.message
                ))
            })?;
            written.push(name);
        }
    }
    write_fio_logs(dir, r)
}

/// fio's log files the jobs asked for (`write_bw_log=PREFIX`...), under
/// `base`: the results directory, or for the fio drop-in the current
/// directory, where fio writes them. A prefix naming a directory that does
/// not exist gets it. In a results directory (`contained`), a prefix that
/// would lead out of it was refused before the run ([`check_log_prefixes`]).
pub fn write_fio_logs(base: &Path, r: &RunResult) -> Result<(), CliError> {
    for f in storbench_report::fio_logs::files(r) {
        let path = base.join(&f.name);
        let made = path.parent().map_or(Ok(()), std::fs::create_dir_all);
        made.and_then(|_| write_atomic(&path, |w| w.write_all(f.body.as_bytes())))
            .map_err(|e| CliError::system(format!("cannot write fio log {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Log prefixes (`write_bw_log=...` and the others) stay inside the results
/// directory: relative, with no `..`.
pub fn check_log_prefixes(specs: &[storbench_workload::JobSpec]) -> Result<(), CliError> {
    use std::path::Component;
    for s in specs {
        for prefix in s.logs.prefixes() {
            let escapes =
                Path::new(prefix).components().any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_)));
            if escapes {
                return Err(CliError::usage(format!(
                    "job '{}': log prefix '{prefix}' leads out of the results directory; give a name relative to it, without '..'",
                    s.name
                )));
            }
        }
    }
    Ok(())
}

/// Write `path` whole or not at all: into a temporary file beside it,
/// flushed, then renamed over it. A full disk or a kill never leaves a
/// truncated file under the real name (the temporary one is removed).
pub fn write_atomic(path: &Path, body: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = create_new(&tmp).and_then(|f| {
        let mut w = BufWriter::new(f);
        body(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_data()
    });
    match written.and_then(|_| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A text file of a results directory (a study's, a checkpoint's figures),
/// written as every result file is: whole, and never through a link.
pub fn write_text(dir: &Path, name: &str, text: &str) -> Result<(), CliError> {
    write_file(dir, name, |w| w.write_all(text.as_bytes()))
}

fn write_file(dir: &Path, name: &str, body: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<(), CliError> {
    let path = dir.join(name);
    write_atomic(&path, body).map_err(|e| CliError::system(format!("{name} was not written ({e}): nothing of it is in {}", dir.display())))
}

/// A run's directory left by an interrupted attempt (a sweep's point, an SLO
/// probe) is kept (nothing measured is lost) under another name, so the
/// run goes afresh.
pub fn set_aside(dir: &Path) -> Result<(), CliError> {
    if !dir.exists() {
        return Ok(());
    }
    let aside = (1..).map(|k| PathBuf::from(format!("{}.interrupted-{k}", dir.display()))).find(|p| !p.exists()).expect("a free name");
    std::fs::rename(dir, &aside).map_err(|e| CliError::system(format!("cannot move {} aside: {e}", dir.display())))?;
    say!("storbench: the earlier, interrupted attempt is kept in {}", aside.display());
    Ok(())
}

/// Write runs in a format to standard output.
pub fn to_stdout(format: &dyn Exporter, runs: &RunSet) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    format.write(runs, &mut out)?;
    out.flush()
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
