//! The per-second series as CSV, one row per job, interval and operation kind.

use std::io::Write;
use storbench_model::{RunResult, SeriesPoint};

pub const HEADER: &str = "job,t_s,duration_s,warmup,op,iops,bytes_per_s,p50_us,p99_us,max_us,errors";

pub fn render(r: &RunResult) -> String {
    let mut v = Vec::new();
    write(r, &mut v).expect("writing to memory cannot fail");
    String::from_utf8(v).expect("CSV is UTF-8")
}

/// Write the CSV row by row (a long run has many rows).
pub fn write(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{HEADER}")?;
    rows(r, out)
}

fn rows(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    for j in &r.jobs {
        for p in &j.series {
            point_rows(&j.name, p, out)?;
        }
    }
    Ok(())
}

/// The rows of one point of one job's series (written as a run goes, too).
pub fn point_rows(job: &str, p: &SeriesPoint, out: &mut impl Write) -> std::io::Result<()> {
    for o in &p.ops {
        writeln!(
            out,
            "{},{:.3},{:.3},{},{},{:.1},{:.0},{:.1},{:.1},{:.1},{}",
            quote(job),
            p.t,
            p.duration,
            p.warmup as u8,
            o.op.name(),
            o.iops,
            o.bytes_per_sec,
            o.p50_ns as f64 / 1e3,
            o.p99_ns as f64 / 1e3,
            o.max_ns as f64 / 1e3,
            o.errors
        )?;
    }
    Ok(())
}

/// A sweep's series (`storbench show -f csv SWEEP_DIR`): the swept
/// options' values of each run in front of its rows (as `export` writes
/// them: sizes in bytes), and its repeat, so rows of different points tell
/// apart. `options` are the sweep's dimensions in order; a run that is no
/// point (a precondition) leaves them empty.
pub fn write_swept(runs: &storbench_model::RunSet, options: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    let names: Vec<String> = options.iter().map(|o| quote(o)).collect();
    writeln!(out, "{},repeat,{HEADER}", names.join(","))?;
    for r in runs.results() {
        let mut cells: Vec<String> = options
            .iter()
            .map(|o| r.parameter(&format!("sweep.{o}")).map_or_else(String::new, |v| quote(&storbench_model::tidy::plain_value(o, v))))
            .collect();
        cells.push(r.parameter("repeat").unwrap_or_default().to_string());
        let prefix = cells.join(",");
        let mut lines = Vec::new();
        rows(r, &mut lines)?;
        for line in String::from_utf8_lossy(&lines).lines() {
            writeln!(out, "{prefix},{line}")?;
        }
    }
    Ok(())
}

pub(crate) fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The per-second series as a format (one header, then every run's rows).
pub struct Csv;

impl crate::Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("csv")
    }
    fn describe(&self) -> &'static str {
        "the per-second series (as series.csv)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("series.csv")
    }
    fn write(&self, runs: &storbench_model::RunSet, mut out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{HEADER}")?;
        runs.results().try_for_each(|r| rows(r, &mut out))
    }
}
