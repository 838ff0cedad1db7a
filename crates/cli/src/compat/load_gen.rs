//! `storbench rados load-gen`: rados load-gen's mixed load (objects of a
//! size range, reads and partial writes of a length range, a bound on the
//! operations in flight, an optional target throughput) on the object model,
//! with storbench's own report.

use super::spec_from;
use crate::cli::{CephConn, LoadGenArgs};
use crate::error::CliError;
use crate::progress;
use crate::session::{execute, finish, RunSetup};

pub fn run(conn: &CephConn, a: &LoadGenArgs) -> Result<i32, CliError> {
    let max_op = a.max_op_len.min(a.min_object_size.max(1));
    let read_pct = a.read_percent.min(100);
    let mut opts = vec![
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
    if let Some(t) = &a.target_throughput {
        opts.push(("rate", t.clone()));
    }
    if a.max_backlog.is_some() {
        eprintln!("storbench: --max-backlog ignored: in-flight work is bounded by --max-ops");
    }
    if a.offset_align.is_some() {
        eprintln!("storbench: --offset-align ignored: op offsets are byte-granular");
    }
    let spec = spec_from(&opts, &conn.options())?;
    eprintln!("storbench: load-gen writes all {} objects first (not measured), and removes them at the end", a.num_objects);
    let setup = RunSetup { results_dir: conn.results_dir.clone(), ..RunSetup::default() };
    let (result, dir) = execute(vec![spec], setup, &mut progress::Live::new(false))?;
    finish(&dir, &result, Some("normal"))
}
