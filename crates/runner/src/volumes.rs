//! `volumes=N`: one job driving N volumes, each as a job of one would (its
//! own `numjobs` workers at its own `iodepth`), so volumes=4 at iodepth=4
//! keeps 16 operations in flight (the Ceph field report's volumes x
//! per-volume queue depth; RBD's `images` shares one queue depth instead).
//!
//! The job has `numjobs x volumes` workers; worker `w` drives volume
//! `w % volumes` ([`JobSpec::volume_of`]) and is worker `w / volumes` of
//! that volume ([`JobSpec::place_in_volume`]), which is what shares a volume
//! out (offset_increment stripes, object keys). What a volume is:
//! - files and devices: each worker's own files as usual (`<name>.<w>.<n>`);
//!   with `filename`, one name per volume (`a:b:c:d`), or one name made
//!   `<name>.<k>`;
//! - an engine's own target with several units (RBD images): the engine
//!   names them ([`storbench_engine::EngineFactory::volume_options`]) and a
//!   worker's I/O goes to its volume's units ([`OnVolume`]);
//! - objects: a prefix per volume, `<prefix>v<k>.` (what removes the job's
//!   prefix removes them too).
//!
//! The coordinator keeps each volume's totals beside the job's
//! (`JobResult::per_volume`).

use crate::plan::PlanError;
use std::path::PathBuf;
use std::time::Duration;
use storbench_engine::{Completion, Engine, EngineError, EngineFactory, IoRequest};
use storbench_model::protocol::JobShare;
use storbench_model::Targets;
use storbench_workload::JobSpec;

/// Refuse what volumes cannot be combined with, and let the engine name its
/// volumes in the job's options.
pub fn resolve(spec: &mut JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    if spec.volumes <= 1 {
        return Ok(());
    }
    let err = |message: String| PlanError::Input { job: spec.name.clone(), message };
    let alone = [
        (spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()), "verify"),
        (spec.kind.replay().is_some(), "read_iolog"),
        (spec.write_iolog.is_some(), "write_iolog"),
        (spec.kind.train().is_some(), "a training preset"),
        (spec.kind.vectordb().is_some(), "a vectordb preset"),
    ];
    if let Some((_, what)) = alone.iter().find(|a| a.0) {
        return Err(err(format!("volumes={} cannot be combined with {what}; run it with volumes=1", spec.volumes)));
    }
    let named = spec.filenames.len();
    if engine.capabilities().needs_files && named > 1 && named != spec.volumes as usize {
        return Err(err(format!(
            "volumes={} with {named} files in filename: name one file per volume (a:b:c), or one file (volume k uses <file>.<k>)",
            spec.volumes
        )));
    }
    spec.engine_options = engine.volume_options(&spec.engine_options, spec.volumes).map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// The paths each worker uses (fio's layout for one volume): without
/// `filename`, `<directory or .>/<name>.<worker>.<n>` for n below `nrfiles`;
/// with it, every worker of a volume shares the volume's file.
pub fn worker_paths(spec: &JobSpec) -> Vec<Vec<PathBuf>> {
    let dir = spec.directory.as_ref().map(PathBuf::from);
    let at = |f: String| dir.as_ref().map(|d| d.join(&f)).unwrap_or_else(|| f.into());
    (0..spec.workers())
        .map(|w| {
            let k = spec.volume_of(w) as usize;
            match spec.filenames.as_slice() {
                [] => {
                    let stem = spec.file_stem.as_deref().unwrap_or(&spec.name);
                    (0..spec.nrfiles).map(|n| at(format!("{stem}.{w}.{n}"))).collect()
                }
                names if spec.volumes <= 1 => names.iter().map(|f| at(f.clone())).collect(),
                [one] => vec![at(format!("{one}.{k}"))],
                names => vec![at(names[k].clone())],
            }
        })
        .collect()
}

/// The object name prefix of worker `w`'s volume.
pub fn object_prefix(prefix: &str, spec: &JobSpec, worker: u32) -> String {
    match spec.volumes {
        0 | 1 => prefix.to_string(),
        _ => format!("{prefix}v{}.", spec.volume_of(worker)),
    }
}

/// Units of an engine's own target that each volume has (its images).
pub fn units_per_volume(targets: &Targets, spec: &JobSpec) -> Option<u32> {
    match targets {
        Targets::Store(t) if spec.volumes > 1 => Some((t.units / spec.volumes).max(1)),
        _ => None,
    }
}

/// The first unit of worker `w`'s volume on an engine's own target, if the
/// job has several volumes there.
pub fn first_unit(share: &JobShare, worker: u32) -> Option<u32> {
    units_per_volume(&share.targets, &share.spec).map(|per| share.spec.volume_of(worker) * per)
}

/// An engine whose worker drives one volume of a target with several units:
/// the generator numbers the volume's units from 0, the engine all of them.
pub struct OnVolume {
    pub inner: Box<dyn Engine>,
    pub first_unit: u32,
}

impl Engine for OnVolume {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.inner.queue(IoRequest { file: req.file + self.first_unit, ..req })
    }
    fn submit_and_reap(&mut self, min_complete: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.inner.submit_and_reap(min_complete, timeout, out)
    }
    fn abandon(&mut self) -> bool {
        self.inner.abandon()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(volumes: u32, numjobs: u32, filenames: &[&str]) -> JobSpec {
        JobSpec { name: "j".into(), volumes, numjobs, filenames: filenames.iter().map(|s| s.to_string()).collect(), ..JobSpec::default() }
    }

    #[test]
    fn each_volume_has_numjobs_workers_and_a_file_of_its_own() {
        let s = spec(3, 2, &["f"]);
        let p = worker_paths(&s);
        assert_eq!(p.len(), 6);
        let names: Vec<String> = p.iter().map(|w| w[0].display().to_string()).collect();
        assert_eq!(names, ["f.0", "f.1", "f.2", "f.0", "f.1", "f.2"]);
        assert_eq!((0..6).map(|w| s.place_in_volume(w)).collect::<Vec<_>>(), [0, 0, 0, 1, 1, 1]);
        let listed = worker_paths(&spec(2, 1, &["/dev/a", "/dev/b"]));
        assert_eq!(listed, [vec![PathBuf::from("/dev/a")], vec![PathBuf::from("/dev/b")]]);
        // One volume: fio's layout, every named file for every worker.
        assert_eq!(worker_paths(&spec(1, 2, &["a", "b"]))[1].len(), 2);
    }

    #[test]
    fn each_volume_has_an_object_prefix_under_the_jobs() {
        let s = spec(4, 1, &[]);
        assert_eq!(object_prefix("storbench.j.", &s, 6), "storbench.j.v2.");
        assert_eq!(object_prefix("p.", &spec(1, 1, &[]), 6), "p.");
    }
}
