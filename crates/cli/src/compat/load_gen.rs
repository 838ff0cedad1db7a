//! `storbench rados load-gen`: rados load-gen's mixed load (objects of a
//! size range, reads and partial writes of a length range, a bound on the
//! operations in flight, an optional target throughput) on the object model,
//! with storbench's own report. `--target-throughput` is load-gen's cap in
//! bytes per second: operations start while the bytes started stay under it.

use super::spec_from;
use crate::cli::{CephConn, LoadGenArgs};
use crate::error::CliError;
use crate::progress;
use crate::session::{execute, finish, RunSetup};

pub fn run(conn: &CephConn, a: &LoadGenArgs) -> Result<i32, CliError> {
    let max_op = a.max_op_len.min(a.min_object_size.max(1));
    let read_pct = a.read_percent.min(100);
    let opts = vec![
        ("name", "rados-load-gen".to_string()),
        ("ioengine", "rados".into()),
        ("objects", a.num_objects.to_string()),
        ("object_size", format!("{}-{}", a.min_object_size, a.max_object_size)),
        ("object_op_size", format!("{}-{max_op}", a.min_op_len.min(max_op))),
        ("object_ops", format!("read:{read_pct},write:{}", 100 - read_pct)),
        ("rw", "randrw".into()),
        ("prefill", "1".into()),
        ("iodepth", a.max_ops.to_string()),
        ("runtime", a.run_length.to_string()),
    ];
    let cap = a.target_throughput.as_deref().map(target_throughput).transpose()?;
    if a.max_backlog.is_some() {
        say!("storbench: --max-backlog ignored: in-flight work is bounded by --max-ops");
    }
    if a.offset_align.is_some() {
        say!("storbench: --offset-align ignored: op offsets are byte-granular");
    }
    let mut spec = spec_from(&opts, &conn.options())?;
    // A cap, as in load-gen: operations start while the bytes started stay
    // under it, each counted by its own length (not arrivals at a rate of
    // cap / 4 KiB with latency from a schedule the store never saw).
    spec.byte_cap = cap;
    say!("storbench: load-gen writes all {} objects first (not measured), and removes them at the end", a.num_objects);
    let setup = RunSetup { results_dir: conn.results_dir.clone(), ..RunSetup::default() };
    let (result, dir) = execute(vec![spec], setup, &mut progress::Live::new(false))?;
    finish(&dir, &result, Some("normal"))
}

/// `--target-throughput`: bytes per second (`1G`, `50m`, `4096`), as load-gen
/// takes it.
fn target_throughput(v: &str) -> Result<f64, CliError> {
    match storbench_workload::units::parse_size(v.trim()) {
        Ok(n) if n > 0 => Ok(n as f64),
        _ => Err(CliError::usage(format!("--target-throughput {v}: give bytes per second, e.g. 50m or 1G (a cap, as in rados load-gen)"))),
    }
}
