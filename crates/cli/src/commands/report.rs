//! `storbench report DIR [DIR ...]`: one self-contained HTML file for a
//! run, a sweep, an SLO search, a study, or (several directories) a
//! comparison; `--charts DIR` writes its charts as SVG and PNG files too.

use crate::cli::ReportArgs;
use crate::commands::compare::{compare_places, load};
use crate::error::*;
use std::path::{Path, PathBuf};
use storbench_html::{build, Report, StepData};
use storbench_model::slo::{SloIndex, SLO_FILE};
use storbench_model::study::{Step, StudyIndex, STUDY_INDEX};
use storbench_model::sweep::{SweepIndex, INDEX_FILE};
use storbench_model::RunSet;
use storbench_report::compare::Judge;

pub fn run(a: &ReportArgs) -> Result<i32, CliError> {
    let out =
        a.output.clone().unwrap_or_else(|| if a.dirs.len() == 1 { a.dirs[0].join("report.html") } else { PathBuf::from("report.html") });
    check_replaceable(&out, a.force)?;
    if let [dir] = a.dirs.as_slice() {
        if dir.join(STUDY_INDEX).exists() {
            if a.output.is_none() && a.charts.is_none() {
                return study_page(dir).map(|_| 0);
            }
            return study_report(dir, &out, a.charts.as_deref());
        }
    }
    let sets: Vec<RunSet> = a.dirs.iter().map(|d| RunSet::load(d).map_err(|e| CliError::usage(e.to_string()))).collect::<Result<_, _>>()?;
    if let Some(dir) = &a.charts {
        charts_dir(dir)?;
    }
    let (html, charts) = if a.dirs.len() == 1 { single(&a.dirs[0], &sets[0])? } else { comparison(&a.dirs, &sets)? };
    write(&out, html.as_bytes())?;
    if let Some(dir) = &a.charts {
        write_charts(dir, &charts)?;
    }
    say!("storbench: report in {}", out.display());
    Ok(0)
}

/// The report goes over an existing file only if that file is a storbench
/// report (regenerated from its results) or `--force` says so; never
/// through a symbolic link.
fn check_replaceable(out: &Path, force: bool) -> Result<(), CliError> {
    let Ok(meta) = std::fs::symlink_metadata(out) else { return Ok(()) };
    if meta.file_type().is_symlink() {
        return Err(CliError::usage(format!("{} is a symbolic link; give the file it points to, or another -o", out.display())));
    }
    if !meta.is_file() {
        return Err(CliError::usage(format!("{} exists and is not a file; give another -o", out.display())));
    }
    if force || is_storbench_report(out) {
        return Ok(());
    }
    Err(CliError::usage(format!(
        "{} exists and is not a storbench report; give another -o FILE, or pass --force to replace it",
        out.display()
    )))
}

/// Whether the file opens as the HTML storbench writes (its generator tag).
fn is_storbench_report(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 512];
    let n = std::fs::File::open(p).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains("<meta name=\"generator\" content=\"storbench ")
}

/// The charts directory, made (and shown writable) before the report is written.
fn charts_dir(dir: &Path) -> Result<(), CliError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CliError::usage(format!("--charts {} is a symbolic link; give the directory it points to", dir.display())));
    }
    std::fs::create_dir_all(dir).map_err(|e| CliError::usage(format!("--charts {}: cannot create it: {e}", dir.display())))?;
    let probe = dir.join(format!(".storbench-probe-{}", std::process::id()));
    crate::output::create_new(&probe)
        .map(|_| {
            let _ = std::fs::remove_file(&probe);
        })
        .map_err(|e| CliError::usage(format!("--charts {}: cannot write in it: {e}", dir.display())))
}

/// Every drawn chart as NAME.svg and NAME.png; on a machine without fonts
/// the SVGs alone, and a line saying why (a PNG without its axis labels
/// would mislead).
fn write_charts(dir: &Path, charts: &[storbench_html::Chart]) -> Result<(), CliError> {
    let raster = storbench_html::raster::Raster::new();
    for (c, svg) in charts.iter().filter_map(|c| c.svg.as_ref().ok().map(|s| (c, s))) {
        write(&dir.join(format!("{}.svg", c.name)), svg.as_bytes())?;
        if let Ok(r) = &raster {
            let png = r.png(svg).map_err(|e| CliError::system(format!("chart {}: {e}", c.name)))?;
            write(&dir.join(format!("{}.png", c.name)), &png)?;
        }
    }
    match raster {
        Ok(_) => say!("storbench: charts (SVG and PNG) in {}", dir.display()),
        Err(e) => say!("storbench: charts (SVG only) in {}; no PNG: {e}", dir.display()),
    }
    Ok(())
}

/// The report of a study directory into `out` (its charts into `charts`).
fn study_report(dir: &Path, out: &Path, charts: Option<&Path>) -> Result<i32, CliError> {
    let index = StudyIndex::load(dir).map_err(CliError::usage)?;
    if let Some(c) = charts {
        charts_dir(c)?;
    }
    let steps: Vec<StepData> = index.steps.iter().map(|s| load_step(dir, s)).collect();
    let (html, drawn) = build(&Report::Study { dir: dir.into(), index: &index, steps: &steps });
    write(out, html.as_bytes())?;
    if let Some(c) = charts {
        write_charts(c, &drawn)?;
    }
    say!("storbench: report in {}", out.display());
    Ok(0)
}

/// A study's report written to `DIR/report.html` (over an earlier report
/// only): what `storbench study` calls when its steps end; the path written.
pub fn study_page(dir: &Path) -> Result<PathBuf, CliError> {
    let out = dir.join("report.html");
    check_replaceable(&out, false)?;
    study_report(dir, &out, None)?;
    Ok(out)
}

/// What a step left: a sweep's or a ramp's index (`sweep.json`), an SLO
/// search's, or runs; whatever is missing or unreadable is said in the
/// page rather than failing it (a study reports as far as it went).
fn load_step(study: &Path, step: &Step) -> StepData {
    // The index is a file anyone can edit: a step's data stays inside the study.
    let Some(rel) = step.rel_dir() else {
        return StepData::Missing(format!("its directory {} is not inside the study's", step.dir));
    };
    let dir = study.join(rel);
    if !dir.is_dir() {
        // A tool step that writes no results (cleanup) is done all the same.
        let why = if step.state == storbench_model::study::StepState::Done {
            "its command writes no results directory (done)"
        } else {
            "no results directory (not run yet)"
        };
        return StepData::Missing(why.into());
    }
    let runs = || RunSet::load(&dir).unwrap_or_default();
    if dir.join(INDEX_FILE).exists() {
        return match SweepIndex::load(&dir) {
            Ok(index) => StepData::Sweep { index, runs: runs() },
            Err(e) => StepData::Missing(e.to_string()),
        };
    }
    if dir.join(SLO_FILE).exists() {
        return match SloIndex::load(&dir) {
            Ok(index) => StepData::Slo { index, runs: runs() },
            Err(e) => StepData::Missing(e),
        };
    }
    match RunSet::load(&dir) {
        Ok(set) => StepData::Runs(set),
        Err(e) => StepData::Missing(e.to_string()),
    }
}

fn single(dir: &Path, set: &RunSet) -> Result<(String, Vec<storbench_html::Chart>), CliError> {
    let bad = |e: String| CliError::usage(e);
    if dir.join(INDEX_FILE).exists() {
        let index = SweepIndex::load(dir).map_err(|e| bad(e.to_string()))?;
        return Ok(build(&Report::Sweep { dir: dir.into(), index: &index, runs: set }));
    }
    if dir.join(SLO_FILE).exists() {
        let index = SloIndex::load(dir).map_err(bad)?;
        return Ok(build(&Report::Slo { dir: dir.into(), index: &index, runs: set }));
    }
    match set.runs.as_slice() {
        [one] => Ok(build(&Report::Run { dir: dir.into(), run: &one.result })),
        _ => Err(bad(format!(
            "{} holds {} runs and no sweep or SLO index: give them as separate directories to compare them",
            dir.display(),
            set.runs.len()
        ))),
    }
}

fn comparison(dirs: &[PathBuf], sets: &[RunSet]) -> Result<(String, Vec<storbench_html::Chart>), CliError> {
    let places: Vec<_> = dirs.iter().map(|d| load(d)).collect::<Result<_, _>>()?;
    let judge = Judge::default();
    let rows = places[1..].iter().map(|p| compare_places(&places[0], p, &judge)).collect();
    let names = side_names(dirs);
    let sides = names.into_iter().zip(dirs.iter().zip(sets)).map(|(n, (d, s))| (n, d.clone(), s)).collect();
    Ok(build(&Report::Compare { sides, rows }))
}

/// What a comparison's tables and legends call each side: its directory's
/// name (`bobtail`, `cuttlefish`), the whole path where two names are the
/// same, and a number after a directory given twice.
pub(crate) fn side_names(dirs: &[PathBuf]) -> Vec<String> {
    let short = |d: &PathBuf| d.file_name().map_or_else(|| d.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut names: Vec<String> = dirs
        .iter()
        .map(|d| if dirs.iter().filter(|e| short(e) == short(d)).count() > 1 { d.display().to_string() } else { short(d) })
        .collect();
    for i in 1..names.len() {
        let n = names[..i].iter().filter(|m| **m == names[i] || m.starts_with(&format!("{} (", names[i]))).count();
        if n > 0 {
            names[i] = format!("{} ({})", names[i], n + 1);
        }
    }
    names
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    crate::output::write_atomic(path, |w| w.write_all(bytes)).map_err(|e| CliError::system(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_named_by_their_directories() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(side_names(&p(&["r/bobtail", "r/cuttlefish"])), ["bobtail", "cuttlefish"]);
        assert_eq!(side_names(&p(&["x/run", "y/run"])), ["x/run", "y/run"]);
        assert_eq!(side_names(&p(&["a", "a", "a"])), ["a", "a (2)", "a (3)"]);
    }
}
