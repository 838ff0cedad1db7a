//! The per-second series as CSV, one row per job, interval and operation kind.

use std::fmt::Write as _;
use storbench_runner::RunResult;

pub const HEADER: &str = "job,t_s,duration_s,warmup,op,iops,bytes_per_s,p50_us,p99_us,max_us,errors";

pub fn render(r: &RunResult) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for j in &r.jobs {
        for p in &j.series {
            for o in &p.ops {
                let _ = writeln!(
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
                );
            }
        }
    }
    out
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
