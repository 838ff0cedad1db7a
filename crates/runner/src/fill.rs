//! `run --fill`: after a fill job, what the store really allocated for its
//! target, set against what the job wrote. A thin-provisioned image (or a
//! sparse file) that kept less than was written would make every later
//! figure describe an emptier store than the one asked for.

use crate::prepare::ReadyJob;
use std::os::unix::fs::MetadataExt;
use storbench_model::{FileKind, FillResult, Targets};

/// How much a pool's or bucket's own accounting grew over the fill. Stores
/// count lazily (Ceph's pool statistics come with the OSDs' next report,
/// seconds later), so it is asked again for up to 20 s until it shows at
/// least 90% of what was written.
fn grown(job: &ReadyJob, written: u64) -> Option<u64> {
    let before = job.fill_before?;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let grown = job.config.allocated().ok().flatten()?.saturating_sub(before);
        if grown as f64 >= written as f64 * 0.9 || std::time::Instant::now() >= until {
            return Some(grown);
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

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
        Targets::Store(_) if job.share.spec.objects.is_some() => grown(job, written),
        Targets::Store(_) => job.config.allocated().ok().flatten(),
        Targets::None => None,
    };
    Some(FillResult { fraction, target: job.share.targets.labels().join(", "), written_bytes: written, allocated_bytes: allocated })
}
