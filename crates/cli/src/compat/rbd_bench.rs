//! `storbench rbd bench`: rbd bench's options, per-second lines and summary
//! (rendered by `storbench_report::compat::rbd_bench`), run on the rbd engine
//! with the one workload model, plus the latency percentiles rbd bench lacks
//! and the usual results directory.
//!
//! Unlike `rbd bench`, writing to an image storbench did not create needs
//! `--allow-overwrite` (the image's data is destroyed).

use super::spec_from;
use crate::cli::{IoPattern, IoType, RbdBenchArgs};
use crate::error::CliError;
use crate::session::{execute, finish, RunSetup};
use storbench_report::compat::rbd_bench::{preamble, summary, Lines, Params};
use storbench_runner::{Observer, Progress};
use storbench_workload::JobSpec;

fn io_type(t: IoType) -> &'static str {
    match t {
        IoType::Read => "read",
        IoType::Write => "write",
        IoType::Readwrite => "readwrite",
    }
}

fn to_spec(a: &RbdBenchArgs) -> Result<JobSpec, CliError> {
    let image = a.image_spec.as_deref().or(a.image.as_deref());
    let image = image.ok_or_else(|| CliError::usage("rbd bench: name the image ([POOL/]IMAGE or --image)"))?;
    let (pool, image) = match image.split_once('/') {
        Some((p, i)) => (p.to_string(), i.to_string()),
        None => (a.conn.pool.clone().unwrap_or_else(|| "rbd".into()), image.to_string()),
    };
    let random = a.io_pattern == IoPattern::Rand;
    let rw = match (a.io_type, random) {
        (IoType::Read, false) => "read",
        (IoType::Read, true) => "randread",
        (IoType::Write, false) => "write",
        (IoType::Write, true) => "randwrite",
        (IoType::Readwrite, false) => "readwrite",
        (IoType::Readwrite, true) => "randrw",
    };
    let mut opts = vec![
        ("name", format!("rbd-bench-{}", io_type(a.io_type))),
        ("ioengine", "rbd".into()),
        ("rbdname", image),
        ("rw", rw.into()),
        ("rwmixread", a.rw_mix_read.to_string()),
        ("bs", a.io_size.to_string()),
        ("iodepth", a.io_threads.to_string()),
        ("io_size", a.io_total.to_string()),
        ("allow_overwrite", (a.allow_overwrite as u8).to_string()),
    ];
    if let Some(c) = &a.rbd_cache {
        opts.push(("rbd_cache", c.clone()));
    }
    let mut conn = a.conn.options();
    conn.retain(|(k, _)| k != "pool");
    conn.push(("pool".into(), pool));
    spec_from(&opts, &conn).map_err(|e| CliError::usage(format!("rbd bench: {e}")))
}

/// rbd bench's per-second lines as the run goes.
struct LiveLines(Lines);

impl Observer for LiveLines {
    fn second(&mut self, p: &Progress) {
        out!("{}", self.0.line(p.point));
    }
}

pub fn run(a: &RbdBenchArgs) -> Result<i32, CliError> {
    let spec = to_spec(a)?;
    let params = Params {
        io_type: io_type(a.io_type).into(),
        io_size: a.io_size,
        io_threads: a.io_threads as u64,
        io_total: a.io_total,
        pattern: if spec.rw.is_random() { "random" } else { "sequential" }.into(),
    };
    out_part!("{}", preamble(&params));
    let setup = RunSetup { results_dir: a.conn.results_dir.clone(), parameters: params.parameters(), ..RunSetup::default() };
    let (result, dir) = execute(vec![spec], setup, &mut LiveLines(Lines::default()))?;
    out_part!("{}", summary(&result));
    finish(&dir, &result, None)
}
