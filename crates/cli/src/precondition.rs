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

use crate::error::CliError;
use storbench_workload::{apply_option, JobSpec};

/// The preconditioning jobs for `specs`' block targets, then `specs` (the
/// first of them starting a new group).
pub fn prepend(mut specs: Vec<JobSpec>) -> Result<Vec<JobSpec>, CliError> {
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
                "--precondition: job '{}' has no filename=; give the file or device to precondition (storbench's own scratch files start fresh anyway)",
                spec.name
            )));
        }
        let key = format!("{}\0{:?}\0{:?}\0{:?}", spec.ioengine, spec.engine_options, spec.directory, spec.filenames);
        if targets.contains(&key) {
            continue;
        }
        targets.push(key);
        pre.push(job(spec, targets.len(), caps.queued, caps.direct_io)?);
    }
    if pre.is_empty() {
        return Err(CliError::usage("--precondition: no job uses a block target (files, devices or RBD images) to precondition"));
    }
    if let Some(first) = specs.first_mut() {
        first.stonewall = true;
    }
    pre.append(&mut specs);
    Ok(pre)
}

/// Twice the job's region, sequentially, in 128 KiB writes.
fn job(spec: &JobSpec, n: usize, queued: bool, direct: bool) -> Result<JobSpec, CliError> {
    let mut p = JobSpec { name: format!("precondition.{n}"), ..JobSpec::default() };
    let depth = if queued { "32" } else { "1" };
    let set = |p: &mut JobSpec, k: &str, v: &str| apply_option(p, k, v).map_err(|e| CliError::usage(format!("--precondition: {e}")));
    for (k, v) in [
        ("ioengine", spec.ioengine.as_str()),
        ("rw", "write"),
        ("bs", "128k"),
        ("iodepth", depth),
        ("direct", if direct { "1" } else { "0" }),
    ] {
        set(&mut p, k, v)?;
    }
    p.filenames = spec.filenames.clone();
    p.directory = spec.directory.clone();
    p.size = spec.size;
    p.offset = spec.offset;
    p.allow_overwrite = spec.allow_overwrite;
    p.destroy_in_use = spec.destroy_in_use;
    p.engine_options = spec.engine_options.clone();
    p.passes = 2;
    p.precondition = true;
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
}
