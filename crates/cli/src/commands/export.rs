//! `storbench export DIR... [-f csv|json] [-o FILE]`: runs, sweeps, SLO
//! searches and studies as one tidy table (one row per point and job
//! scope, every swept value a column; `model::tidy`), for spreadsheets and
//! notebooks. Every directory is read before anything is written.
//! `--series` gives every run's timeline instead (`model::timeline`): a
//! row per source, second and figure, faults included.

use crate::cli::{ExportArgs, TidyFormat};
use crate::error::CliError;
use std::io::Write;
use std::path::Path;
use storbench_model::tidy::{self, TidyRow, TidyTable};
use storbench_model::timeline;
use storbench_report::tidy::{write_csv, write_json};

pub fn run(a: &ExportArgs) -> Result<i32, CliError> {
    if let Some(out) = &a.output {
        check_output(out, a.force)?;
    }
    let (count, render) = if a.series { series(a)? } else { points(a)? };
    match &a.output {
        Some(out) => {
            crate::output::write_atomic(out, |w| render(w))
                .map_err(|e| CliError::system(format!("cannot write {}: {e}", out.display())))?;
            say!("storbench: {count} rows in {}", out.display());
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            crate::streams::checked(crate::streams::Stream::Stdout, render(&mut out).and_then(|_| out.flush()));
        }
    }
    Ok(0)
}

/// Writes the whole table in the format asked for.
type Render = Box<dyn Fn(&mut dyn Write) -> std::io::Result<()>>;

/// The tidy table: a row per point and job scope.
fn points(a: &ExportArgs) -> Result<(usize, Render), CliError> {
    let mut rows = Vec::new();
    for dir in &a.dirs {
        rows.extend(rows_of(dir)?);
    }
    let table = TidyTable::new(rows);
    let format = a.format;
    Ok((
        table.rows.len(),
        Box::new(move |w| match format {
            TidyFormat::Csv => write_csv(&table, w),
            TidyFormat::Json => write_json(&table, w),
        }),
    ))
}

/// Every run's timeline (`--series`): a row per source, second and figure.
fn series(a: &ExportArgs) -> Result<(usize, Render), CliError> {
    let mut rows = Vec::new();
    for dir in &a.dirs {
        check_dir(dir)?;
        let base = dir.display().to_string();
        let found = timeline::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
        rows.extend(found.into_iter().map(|mut r| {
            r.dir = under(&base, &r.dir);
            r
        }));
    }
    let format = a.format;
    Ok((
        rows.len(),
        Box::new(move |w| match format {
            TidyFormat::Csv => storbench_report::timeline::write_csv(&rows, w),
            TidyFormat::Json => storbench_report::timeline::write_json(&rows, w),
        }),
    ))
}

/// `rel` under the directory as given.
fn under(base: &str, rel: &str) -> String {
    if rel.is_empty() {
        base.to_string()
    } else {
        format!("{}/{rel}", base.trim_end_matches('/'))
    }
}

fn check_dir(dir: &Path) -> Result<(), CliError> {
    if dir.is_dir() {
        return Ok(());
    }
    let what = if dir.exists() { "not a directory" } else { "no such directory" };
    Err(CliError::usage(format!("{}: {what}; give run, sweep, SLO search or study results directories", dir.display())))
}

/// A directory's rows, their `dir` under the path as given.
fn rows_of(dir: &Path) -> Result<Vec<TidyRow>, CliError> {
    check_dir(dir)?;
    let rows = tidy::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    let base = dir.display().to_string();
    Ok(rows
        .into_iter()
        .map(|mut r| {
            r.dir = under(&base, &r.dir);
            r
        })
        .collect())
}

/// `-o FILE` replaces a file only with `--force`, never through a link,
/// and its directory must exist.
fn check_output(out: &Path, force: bool) -> Result<(), CliError> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(CliError::usage(format!("-o {} is a symbolic link; give the file it points to, or another -o", out.display())))
        }
        Ok(m) if !m.is_file() => Err(CliError::usage(format!("-o {} exists and is not a file; give another -o", out.display()))),
        Ok(_) if !force => {
            Err(CliError::usage(format!("-o {} exists; give another -o FILE, or pass --force to replace it", out.display())))
        }
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if parent.is_dir() {
                Ok(())
            } else {
                Err(CliError::usage(format!("-o {}: no directory {}; create it first or give another -o", out.display(), parent.display())))
            }
        }
    }
}
