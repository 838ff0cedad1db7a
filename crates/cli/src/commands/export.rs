//! `storbench export DIR... [-f csv|json] [-o FILE]`: runs, sweeps, SLO
//! searches and studies as one tidy table (one row per point and job
//! scope, every swept value a column; `model::tidy`), for spreadsheets and
//! notebooks. Every directory is read before anything is written.

use crate::cli::{ExportArgs, TidyFormat};
use crate::error::CliError;
use std::io::Write;
use std::path::Path;
use storbench_model::tidy::{self, TidyRow, TidyTable};
use storbench_report::tidy::{write_csv, write_json};

pub fn run(a: &ExportArgs) -> Result<i32, CliError> {
    if let Some(out) = &a.output {
        check_output(out, a.force)?;
    }
    let mut rows = Vec::new();
    for dir in &a.dirs {
        rows.extend(rows_of(dir)?);
    }
    let table = TidyTable::new(rows);
    let render = |w: &mut dyn Write| match a.format {
        TidyFormat::Csv => write_csv(&table, w),
        TidyFormat::Json => write_json(&table, w),
    };
    match &a.output {
        Some(out) => {
            crate::output::write_atomic(out, |w| render(w))
                .map_err(|e| CliError::system(format!("cannot write {}: {e}", out.display())))?;
            say!("storbench: {} rows in {}", table.rows.len(), out.display());
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            crate::streams::checked(crate::streams::Stream::Stdout, render(&mut out).and_then(|_| out.flush()));
        }
    }
    Ok(0)
}

/// A directory's rows, their `dir` under the path as given.
fn rows_of(dir: &Path) -> Result<Vec<TidyRow>, CliError> {
    if !dir.is_dir() {
        let what = if dir.exists() { "not a directory" } else { "no such directory" };
        return Err(CliError::usage(format!("{}: {what}; give run, sweep, SLO search or study results directories", dir.display())));
    }
    let rows = tidy::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    let base = dir.display().to_string();
    Ok(rows
        .into_iter()
        .map(|mut r| {
            r.dir = if r.dir.is_empty() { base.clone() } else { format!("{}/{}", base.trim_end_matches('/'), r.dir) };
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
