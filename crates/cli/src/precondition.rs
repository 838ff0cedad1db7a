//! `run --precondition`: SNIA PTS's workload-independent preconditioning
//! before the jobs: every block target the jobs use is written twice over,
//! sequentially, in 128 KiB writes, so a drive (or an image) is measured in
//! the state it will live in, not fresh out of the box.
//!
//! Each distinct target gets one job of its own (`precondition.N`, the
//! target's own engine and options, direct I/O where the engine has it, 32
//! in flight where it queues), all in a group before the run's jobs: it has
//! the live progress and ETA of any job, and its figures stay in the results
//! so the time it took is on record. Writing is what the jobs' own flags
//! allow (`allow_overwrite`, `destroy_in_use`): a target the safety checks
//! would refuse to write is refused here too. The workload-dependent phase is
//! the job itself with `--steady-state snia`.
//!
//! `run --fill PCT` is the same, once over that share of each target in
//! 1 MiB writes (`fill.N`); after it the store's own allocation is checked
//! (an RBD image's written extents, a file's blocks), so thin provisioning
//! cannot pass off an empty image as a full one.

use crate::error::CliError;
use storbench_workload::{apply_option, JobSpec};

/// What is written to each target before the jobs.
#[derive(Clone, Copy)]
pub enum Before {
    /// Twice over, 128 KiB sequential writes (`--precondition`).
    Precondition,
    /// This share of it once, in 1 MiB writes (`--fill`).
    Fill(f64),
}

impl Before {
    fn flag(self) -> &'static str {
        match self {
            Before::Precondition => "--precondition",
            Before::Fill(_) => "--fill",
        }
    }
}

/// The preconditioning (or fill) jobs for `specs`' block targets, then
/// `specs` (the first of them starting a new group).
pub fn prepend(specs: Vec<JobSpec>) -> Result<Vec<JobSpec>, CliError> {
    prepend_with(specs, Before::Precondition)
}

pub fn prepend_with(mut specs: Vec<JobSpec>, before: Before) -> Result<Vec<JobSpec>, CliError> {
    let flag = before.flag();
    let mut targets: Vec<String> = Vec::new();
    let mut pre = Vec::new();
    for spec in &specs {
        let Some(engine) = storbench_engine::find(&spec.ioengine) else { continue };
        let caps = engine.capabilities();
        if spec.objects.is_some() || !caps.blocks || !caps.does_io {
            continue;
        }
        if caps.needs_files && spec.filenames.is_empty() {
            return Err(CliError::usage(format!(
                "{flag}: job '{}' has no filename=; give the file or device to write first (storbench's own scratch files are written whole anyway)",
                spec.name
            )));
        }
        let key = format!("{}\0{:?}\0{:?}\0{:?}", spec.ioengine, spec.engine_options, spec.directory, spec.filenames);
        if targets.contains(&key) {
            continue;
        }
        targets.push(key);
        pre.push(job(spec, targets.len(), caps.queued, caps.direct_io, before)?);
    }
    if pre.is_empty() {
        return Err(CliError::usage(format!("{flag}: no job uses a block target (files, devices or RBD images) to write first")));
    }
    if let Some(first) = specs.first_mut() {
        first.stonewall = true;
    }
    pre.append(&mut specs);
    Ok(pre)
}

/// Twice the job's region, sequentially, in 128 KiB writes; or its fill
/// share once in 1 MiB writes.
fn job(spec: &JobSpec, n: usize, queued: bool, direct: bool, before: Before) -> Result<JobSpec, CliError> {
    let (name, bs) = match before {
        Before::Precondition => ("precondition", "128k"),
        Before::Fill(_) => ("fill", "1m"),
    };
    let mut p = JobSpec { name: format!("{name}.{n}"), ..JobSpec::default() };
    let depth = if queued { "32" } else { "1" };
    let set = |p: &mut JobSpec, k: &str, v: &str| apply_option(p, k, v).map_err(|e| CliError::usage(format!("{}: {e}", before.flag())));
    for (k, v) in
        [("ioengine", spec.ioengine.as_str()), ("rw", "write"), ("bs", bs), ("iodepth", depth), ("direct", if direct { "1" } else { "0" })]
    {
        set(&mut p, k, v)?;
    }
    p.filenames = spec.filenames.clone();
    p.directory = spec.directory.clone();
    p.size = spec.size;
    p.offset = spec.offset;
    p.allow_overwrite = spec.allow_overwrite;
    p.destroy_in_use = spec.destroy_in_use;
    p.engine_options = spec.engine_options.clone();
    p.precondition = true;
    match before {
        Before::Precondition => p.passes = 2,
        Before::Fill(f) => p.fill = Some(f),
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pairs: &[(&str, &str)]) -> JobSpec {
        storbench_workload::options::spec_from(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn one_preconditioning_job_per_distinct_target_before_the_jobs() {
        let a = spec(&[("name", "a"), ("filename", "/dev/x"), ("ioengine", "psync"), ("rw", "randread")]);
        let b = spec(&[("name", "b"), ("filename", "/dev/x"), ("ioengine", "psync"), ("rw", "randwrite")]);
        let c = spec(&[("name", "c"), ("filename", "/dev/y"), ("ioengine", "io_uring"), ("allow_overwrite", "1")]);
        let all = prepend(vec![a, b, c]).unwrap();
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["precondition.1", "precondition.2", "a", "b", "c"]);
        assert_eq!((all[0].iodepth, all[1].iodepth), (1, 32), "psync cannot queue");
        assert!(all[1].allow_overwrite && all[1].direct && all[1].passes == 2 && all[1].bs.max() == 128 << 10);
        assert!(all[2].stonewall && !all[3].stonewall);
    }

    #[test]
    fn jobs_without_a_named_target_or_without_block_targets_are_refused() {
        let e = prepend(vec![spec(&[("name", "a"), ("ioengine", "psync")])]).unwrap_err();
        assert!(e.message.contains("no filename="), "{}", e.message);
        let e = prepend(vec![spec(&[("name", "n"), ("ioengine", "null")])]).unwrap_err();
        assert!(e.message.contains("no job uses a block target"), "{}", e.message);
    }

    #[test]
    fn a_fill_writes_its_share_once_in_1m_writes() {
        let a = spec(&[("name", "a"), ("filename", "/dev/x"), ("ioengine", "io_uring")]);
        let all = prepend_with(vec![a], Before::Fill(0.8)).unwrap();
        assert_eq!(all[0].name, "fill.1");
        assert_eq!((all[0].fill, all[0].passes, all[0].bs.max()), (Some(0.8), 1, 1 << 20));
    }
}
