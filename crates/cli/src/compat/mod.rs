//! The tools storbench stands in for, each in its own module: their flags
//! (clap, in `cli`), how they map onto ordinary runs, and their live lines.
//! What they print from results is a pure renderer in
//! `storbench_report::compat`, so `storbench show` prints it again.

pub mod fio;
pub mod load_gen;
pub mod rados_bench;
pub mod rados_cleanup;
pub mod rbd_bench;
pub mod swift_bench;

use crate::cli::{CephConn, RadosArgs, RadosCommand};
use crate::error::CliError;
use storbench_engine::ObjectAdmin;
use storbench_workload::JobSpec;

pub fn rados(a: &RadosArgs) -> Result<i32, CliError> {
    if a.conn.pool.is_none() {
        return Err(CliError::usage("name the pool with -p POOL"));
    }
    match &a.command {
        RadosCommand::Bench(b) => rados_bench::run(&a.conn, b),
        RadosCommand::Cleanup(c) => rados_cleanup::run(&a.conn, c),
        RadosCommand::LoadGen(l) => load_gen::run(&a.conn, l),
    }
}

/// A job from a tool's options and its connection flags.
pub fn spec_from(opts: &[(&str, String)], conn: &[(String, String)]) -> Result<JobSpec, CliError> {
    let pairs = opts.iter().map(|(k, v)| (*k, v.as_str())).chain(conn.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    storbench_workload::options::spec_from(pairs).map_err(|e| CliError::usage(e.to_string()))
}

/// Single-object access to the pool, through the rados engine's own options.
pub fn rados_admin(conn: &CephConn) -> Result<Box<dyn ObjectAdmin>, CliError> {
    let engine = storbench_engine::find("rados").expect("the rados engine is registered");
    let options = conn.options().into_iter().collect();
    Ok(engine.configure(&options)?.admin()?)
}
