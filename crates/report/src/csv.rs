//! The per-second series as CSV, one row per job, interval and operation kind.

use std::io::Write;
use storbench_runner::RunResult;

pub const HEADER: &str = "job,t_s,duration_s,warmup,op,iops,bytes_per_s,p50_us,p99_us,max_us,errors";

pub fn render(r: &RunResult) -> String {
    let mut v = Vec::new();
    write(r, &mut v).expect("writing to memory cannot fail");
    String::from_utf8(v).expect("CSV is UTF-8")
}

/// Write the CSV row by row (a long run has many rows).
pub fn write(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{HEADER}")?;
    for j in &r.jobs {
        for p in &j.series {
            for o in &p.ops {
                writeln!(
                    out,
                    "{},{:.3},{:.3},{},{},{:.1},{:.0},{:.1},{:.1},{:.1},{}",
                    quote(&j.name),
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
        }
    }
    Ok(())
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
