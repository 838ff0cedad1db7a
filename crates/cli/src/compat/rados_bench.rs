//! `storbench rados bench SECONDS write|seq|rand`: rados bench on the rados
//! engine with the object workload model.
//!
//! It keeps rados bench's conventions so the two tools interoperate: objects
//! `benchmark_data_<host>_<pid>_object<N>`, and a metadata object
//! (`benchmark_last_metadata`, or `--run-name`) holding object size, number
//! of writes, writer pid and op size, in rados bench's encoding. So `storbench
//! rados bench 10 seq` reads what `rados bench 10 write --no-cleanup` left,
//! and the other way round. The table and summary are rendered by
//! `storbench_report::compat::rados_bench`.

use super::{rados_admin, spec_from};
use crate::cli::{BenchMode, CephConn, RadosBenchArgs};
use crate::error::CliError;
use crate::session::{execute, finish, RunSetup};
use storbench_model::RunResult;
use storbench_report::compat::rados_bench::{preamble, summary, Params, Table, HEADER};
use storbench_runner::{Observer, Progress};
use storbench_workload::OpKind;

pub const METADATA: &str = "benchmark_last_metadata";
pub const PREFIX: &str = "benchmark_data";
/// Key space of a write benchmark without --max-objects (its bitmap is 1.2 MiB).
const WRITE_KEYS: u64 = 10_000_000;

/// rados bench's metadata object: object size (u64), writes made (i32),
/// writer pid (i32), op size (u64), little-endian as Ceph encodes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchMeta {
    pub object_size: u64,
    pub num_ops: i32,
    pub pid: i32,
    pub op_size: u64,
}

impl BenchMeta {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&self.object_size.to_le_bytes());
        b.extend_from_slice(&self.num_ops.to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.op_size.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<BenchMeta> {
        let u64_at = |i: usize| b.get(i..i + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
        let i32_at = |i: usize| b.get(i..i + 4).map(|s| i32::from_le_bytes(s.try_into().expect("4 bytes")));
        let object_size = u64_at(0)?;
        // Old writers left out the op size: it was the object size.
        Some(BenchMeta { object_size, num_ops: i32_at(8)?, pid: i32_at(12)?, op_size: u64_at(16).unwrap_or(object_size) })
    }
}

/// rados bench's object prefix for a pid: host name cut at 29 bytes, as it does.
pub fn bench_prefix(pid: i32) -> String {
    let host: String = storbench_runner::hostname().chars().take(29).collect();
    format!("{PREFIX}_{host}_{pid}_object")
}

pub fn run(conn: &CephConn, a: &RadosBenchArgs) -> Result<i32, CliError> {
    if a.reuse_bench {
        return Err(CliError::usage("--reuse-bench is not supported: write new objects, or read them with seq/rand"));
    }
    if a.object_size.is_some_and(|o| o != a.op_size) {
        return Err(CliError::usage("an object size (-O) different from the op size (-b) is not supported: objects are written whole"));
    }
    let run_name = a.run_name.clone().unwrap_or_else(|| METADATA.to_string());
    let admin = rados_admin(conn)?;
    match a.mode {
        BenchMode::Write => {
            let pid = std::process::id() as i32;
            let made = write(conn, a, pid)?;
            if a.no_cleanup {
                let meta = BenchMeta { object_size: a.op_size, num_ops: made.1.min(i32::MAX as u64) as i32, pid, op_size: a.op_size };
                admin.put(&run_name, &meta.encode())?;
            }
            Ok(made.0)
        }
        BenchMode::Seq | BenchMode::Rand => {
            let meta = match admin.get(&run_name, 64)?.and_then(|b| BenchMeta::decode(&b)) {
                Some(m) if m.num_ops > 0 => m,
                _ => {
                    let pool = conn.pool.as_deref().unwrap_or_default();
                    return Err(CliError::usage(format!(
                        "no benchmark data to read in pool '{pool}' (object '{run_name}' is missing or empty): \
                         run `storbench rados bench <seconds> write --no-cleanup -p {pool}` (or rados bench) first"
                    )));
                }
            };
            drop(admin);
            read(conn, a, meta)
        }
    }
}

/// The write benchmark; its exit code and the objects it wrote.
fn write(conn: &CephConn, a: &RadosBenchArgs, pid: i32) -> Result<(i32, u64), CliError> {
    let prefix = bench_prefix(pid);
    let size = a.op_size;
    let mut opts = vec![
        ("name", "rados-bench-write".to_string()),
        ("ioengine", "rados".into()),
        ("objects", if a.max_objects > 0 { a.max_objects } else { WRITE_KEYS }.to_string()),
        ("object_size", size.to_string()),
        ("object_prefix", prefix.clone()),
        ("object_ops", "create:1".into()),
        ("rados_bench_data", "1".into()),
        ("iodepth", a.threads.to_string()),
        ("cleanup", (!a.no_cleanup as u8).to_string()),
    ];
    if a.seconds > 0 {
        opts.push(("runtime", a.seconds.to_string()));
    }
    if a.max_objects > 0 {
        opts.push(("number_ios", a.max_objects.to_string()));
    }
    let params = Params {
        mode: "write".into(),
        seconds: a.seconds,
        size,
        threads: a.threads,
        max_objects: a.max_objects,
        prefix: prefix.trim_end_matches("_object").to_string(),
    };
    let result = run_table(conn, spec_from(&opts, &conn.options())?, params)?;
    let made = result.0.jobs.first().and_then(|j| j.op(OpKind::Create)).map_or(0, |o| o.ios);
    Ok((result.1, made))
}

fn read(conn: &CephConn, a: &RadosBenchArgs, meta: BenchMeta) -> Result<i32, CliError> {
    if meta.op_size != meta.object_size {
        return Err(CliError::usage(format!(
            "the benchmark data was written in {}-byte ops into {}-byte objects; storbench reads whole objects only",
            meta.op_size, meta.object_size
        )));
    }
    let random = a.mode == BenchMode::Rand;
    let size = meta.object_size;
    let mut opts = vec![
        ("name", format!("rados-bench-{}", if random { "rand" } else { "seq" })),
        ("ioengine", "rados".into()),
        ("objects", meta.num_ops.to_string()),
        ("object_size", size.to_string()),
        ("object_prefix", bench_prefix(meta.pid)),
        ("objects_exist", "1".into()),
        ("object_ops", "read:1".into()),
        ("rw", if random { "randread" } else { "read" }.into()),
        ("iodepth", a.threads.to_string()),
    ];
    if a.seconds > 0 {
        opts.push(("runtime", a.seconds.to_string()));
    }
    if !random {
        // seq reads each object once, as rados bench does.
        opts.push(("io_size", (meta.num_ops as u64 * size).to_string()));
    }
    let params = Params {
        mode: if random { "rand" } else { "seq" }.into(),
        seconds: a.seconds,
        size,
        threads: a.threads,
        max_objects: 0,
        prefix: bench_prefix(meta.pid).trim_end_matches("_object").to_string(),
    };
    Ok(run_table(conn, spec_from(&opts, &conn.options())?, params)?.1)
}

/// rados bench's per-second lines as the run goes.
struct Lines {
    params: Params,
    table: Table,
}

impl Observer for Lines {
    fn second(&mut self, p: &Progress) {
        if let Some(line) = self.table.line(&self.params, p.point) {
            out!("{line}");
        }
    }
}

/// Run the job under rados bench's table; the result and the exit code.
fn run_table(conn: &CephConn, spec: storbench_workload::JobSpec, params: Params) -> Result<(RunResult, i32), CliError> {
    out_part!("{}", preamble(&params));
    out!("{HEADER}");
    let setup = RunSetup { results_dir: conn.results_dir.clone(), parameters: params.parameters(), ..RunSetup::default() };
    let size = params.size;
    let mut lines = Lines { params, table: Table::default() };
    let (result, dir) = execute(vec![spec], setup, &mut lines)?;
    out_part!("{}", summary(&result, &lines.table, size));
    let code = finish(&dir, &result, None)?;
    Ok((result, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_in_rados_bench_encoding() {
        // Bytes written by `rados bench 3 write -b 65536 --no-cleanup` (Ceph 16.2).
        let real = [0, 0, 1, 0, 0, 0, 0, 0, 0x46, 0x08, 0, 0, 0xa1, 0x6d, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        let m = BenchMeta::decode(&real).unwrap();
        assert_eq!(m, BenchMeta { object_size: 65536, num_ops: 2118, pid: 28065, op_size: 65536 });
        assert_eq!(m.encode(), real);
        assert_eq!(BenchMeta::decode(&real[..16]).unwrap().op_size, 65536);
        assert!(BenchMeta::decode(&real[..10]).is_none());
    }

    #[test]
    fn bench_prefix_matches_rados_bench() {
        let p = bench_prefix(42);
        assert!(p.starts_with("benchmark_data_") && p.ends_with("_42_object"), "{p}");
    }
}
