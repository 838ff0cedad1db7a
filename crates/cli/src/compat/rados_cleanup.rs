//! `storbench rados cleanup`: remove benchmark objects, as `rados cleanup`
//! does: those of the recorded run, or of a given benchmark prefix, never
//! anything else.

use super::rados_admin;
use super::rados_bench::{bench_prefix, BenchMeta, METADATA, PREFIX};
use crate::cli::{CephConn, RadosCleanupArgs};
use crate::error::CliError;

pub fn run(conn: &CephConn, a: &RadosCleanupArgs) -> Result<i32, CliError> {
    let admin = rados_admin(conn)?;
    let run_name = a.run_name.clone().unwrap_or_else(|| METADATA.to_string());
    let meta = admin.get(&run_name, 64)?.and_then(|b| BenchMeta::decode(&b));
    let prefix = match (&a.prefix, meta) {
        (Some(p), _) if p.starts_with(PREFIX) => p.clone(),
        (Some(p), _) => return Err(CliError::usage(format!("--prefix '{p}' is not a benchmark prefix (it must start with {PREFIX})"))),
        (None, Some(m)) => bench_prefix(m.pid),
        (None, None) => format!("{PREFIX}_"),
    };
    let mut removed = 0;
    for n in &admin.list(&prefix)? {
        removed += admin.remove(n)? as u64;
    }
    admin.remove(&run_name)?;
    out!("Removed {removed} objects");
    Ok(0)
}
