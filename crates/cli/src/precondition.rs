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
//! allows (`allow_overwrite`): a target the safety checks
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
    pub fn flag(self) -> &'static str {
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
    let mut pre = jobs_before(&specs, before)?;
    if let Some(first) = specs.first_mut() {
        first.stonewall = true;
    }
    pre.append(&mut specs);
    Ok(pre)
}

/// The preconditioning (or fill) jobs alone: one per distinct target of
/// `specs` (a sweep runs them once before its points).
pub fn jobs_before(specs: &[JobSpec], before: Before) -> Result<Vec<JobSpec>, CliError> {
    let flag = before.flag();
    let mut targets: Vec<String> = Vec::new();
    let mut pre = Vec::new();
    for spec in specs {
        let Some(engine) = storbench_engine::find(&spec.ioengine) else { continue };
        let caps = engine.capabilities();
        let objects = spec.objects.is_some() || !caps.blocks;
        if !caps.does_io || (objects && !(matches!(before, Before::Fill(_)) && caps.objects)) {
            continue;
        }
        if objects {
            // A pool, bucket or container: filled with objects of the job's sizes.
            let key = format!("{}\0{:?}", spec.ioengine, spec.engine_options);
            if !targets.contains(&key) {
                targets.push(key);
                pre.push(object_fill(spec, targets.len(), before)?);
            }
            continue;
        }
        if caps.needs_files && spec.filenames.is_empty() {
            return Err(CliError::usage(format!(
                "{flag}: job '{}' has no filename=; give the file or device to write first (or set overwrite=1 to have new files written whole before the job)",
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
        return Err(CliError::usage(format!(
            "{flag}: no job uses a target to write first (files, devices or RBD images; pools and buckets for --fill)"
        )));
    }
    Ok(pre)
}

/// A pool's, bucket's or container's fill: objects of the job's sizes
/// under a prefix of their own (`storbench.fill<N>.`), kept while the run's
/// jobs run and removed at its end. How many is settled when the target is
/// prepared: the share of a pool's capacity, or of the job's object count
/// where the store has no capacity to speak of (a bucket).
fn object_fill(spec: &JobSpec, n: usize, before: Before) -> Result<JobSpec, CliError> {
    let Before::Fill(f) = before else { unreachable!("objects are filled, not preconditioned") };
    let mut p = JobSpec { name: format!("fill.{n}"), ..JobSpec::default() };
    apply_option(&mut p, "ioengine", &spec.ioengine).map_err(|e| CliError::usage(format!("--fill: {e}")))?;
    p.engine_options = spec.engine_options.clone();
    let mut o = spec.objects.clone().unwrap_or_default();
    o.prefix = Some(format!("storbench.fill{n}."));
    o.mix = vec![(storbench_workload::OpKind::Create, 1)];
    o.op_len = None;
    o.prefill = false;
    o.initial = None;
    o.exist = false;
    o.cleanup = Some(false);
    o.naming = storbench_workload::Naming::Numbered;
    p.number_ios = Some(o.count);
    // Creates in key order never meet, but the plan warns when few objects face many slots.
    p.iodepth = (o.count / 4).clamp(1, 16) as u32;
    p.objects = Some(o);
    p.precondition = true;
    p.fill = Some(f);
    p.allow_overwrite = spec.allow_overwrite;
    Ok(p)
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
        assert!(e.message.contains("no job uses a target to write first"), "{}", e.message);
    }

    #[test]
    fn a_fill_writes_its_share_once_in_1m_writes() {
        let a = spec(&[("name", "a"), ("filename", "/dev/x"), ("ioengine", "io_uring")]);
        let all = prepend_with(vec![a], Before::Fill(0.8)).unwrap();
        assert_eq!(all[0].name, "fill.1");
        assert_eq!((all[0].fill, all[0].passes, all[0].bs.max()), (Some(0.8), 1, 1 << 20));
    }

    #[test]
    fn a_fill_of_a_pool_creates_objects_of_the_jobs_size_under_a_prefix_of_its_own_and_keeps_them() {
        let a = spec(&[("name", "a"), ("ioengine", "rados"), ("pool", "p"), ("objects", "40"), ("object_size", "64k"), ("rw", "randread")]);
        let all = prepend_with(vec![a], Before::Fill(0.5)).unwrap();
        let o = all[0].objects.as_ref().unwrap();
        assert_eq!((all[0].name.as_str(), all[0].fill, o.prefix.as_deref()), ("fill.1", Some(0.5), Some("storbench.fill1.")));
        assert_eq!((o.mix.clone(), o.cleanup, o.sizes.max()), (vec![(storbench_workload::OpKind::Create, 1)], Some(false), 64 << 10));
        assert!(all[0].writes() && all[1].stonewall);
        let e = prepend(vec![spec(&[("name", "a"), ("ioengine", "rados"), ("pool", "p")])]).unwrap_err();
        assert!(e.message.contains("no job uses a target"), "objects are filled, not preconditioned: {}", e.message);
    }
}
