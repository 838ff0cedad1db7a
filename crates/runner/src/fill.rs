//! `run --fill`: after a fill job, what the store really allocated for its
//! target, set against what the job wrote. A thin-provisioned image (or a
//! sparse file) that kept less than was written would make every later
//! figure describe an emptier store than the one asked for.

use crate::prepare::ReadyJob;
use std::os::unix::fs::MetadataExt;
use storbench_model::{FileKind, FillResult, Targets};

/// A fill job's result: the share asked for, the bytes written and the
/// bytes the store says it holds (`None` when it cannot tell, e.g. a block
/// device, or the store could not be asked).
pub fn result(job: &ReadyJob, written: u64) -> Option<FillResult> {
    let fraction = job.share.spec.fill?;
    let allocated = match &job.share.targets {
        Targets::Files(per_worker) => {
            let mut files: Vec<_> = per_worker.iter().flatten().filter(|f| f.kind == FileKind::File).collect();
            files.sort_by(|a, b| a.path.cmp(&b.path));
            files.dedup_by(|a, b| a.path == b.path);
            let sizes: Option<Vec<u64>> = files.iter().map(|f| std::fs::metadata(&f.path).ok().map(|m| m.blocks() * 512)).collect();
            sizes.filter(|s| !s.is_empty()).map(|s| s.iter().sum())
        }
        Targets::Store(_) => job.config.allocated().ok().flatten(),
        Targets::None => None,
    };
    Some(FillResult { fraction, target: job.share.targets.labels().join(", "), written_bytes: written, allocated_bytes: allocated })
}
